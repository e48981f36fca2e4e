import { Alert, Code, Stack, Table, Text } from '@mantine/core';
import type { Run } from './statusSyncForm';

/** What a status pull run read and changed (or, as a dry run, would change). */
export function PullRunResult({ run }: { run: Run }) {
  return (
    <Stack gap="xs" data-testid="pull-result">
      <Alert color={run.ok ? 'blue' : 'red'} title={run.dry_run ? 'Dry run: nothing was changed' : 'Applied'}>
        {run.error ? `The pull failed: ${run.error}. ` : ''}
        {run.items_read} item(s) read, {run.changes.length} lead(s) {run.dry_run ? 'would change' : 'changed'},{' '}
        {run.unchanged} unchanged
        {run.unmatched.length ? `, ${run.unmatched.length} not found among this partner's delivered leads` : ''}.
      </Alert>
      {run.requests.map((r, i) => (
        <Text size="xs" key={i} ff="monospace" style={{ wordBreak: 'break-all' }}>
          {r.method} {r.url} → {r.http_status ?? 'no answer'} ({r.items} items){r.error ? ` ${r.error}` : ''}
        </Text>
      ))}
      {run.changes.length > 0 && (
        <Table fz="sm" data-testid="pull-changes">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Partner lead id</Table.Th>
              <Table.Th>Status word</Table.Th>
              <Table.Th>Sale status</Table.Th>
              <Table.Th>FTD</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {run.changes.map((c) => (
              <Table.Tr key={c.lead_id} data-testid="pull-change">
                <Table.Td>
                  <Code>{c.partner_lead_id}</Code>
                </Table.Td>
                <Table.Td>{c.status_word ?? '—'}</Table.Td>
                <Table.Td>
                  {c.sale_status.from ?? '—'} → {c.sale_status.to ?? '—'}
                </Table.Td>
                <Table.Td>{c.ftd ? 'FTD' : ''}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Stack>
  );
}
