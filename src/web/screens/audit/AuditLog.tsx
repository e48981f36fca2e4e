import { Alert, Badge, Button, Code, Group, Stack, Table, Text, Title, UnstyledButton } from '@mantine/core';
import { Fragment, useState } from 'react';
import { useSearchParams } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import type { paths } from '../../api/schema';
import { Loading } from '../../Loading';
import { AuditFilters } from './AuditFilters';
import { usePagedList } from '../../ui/ListPage';
import { useClock } from '../../ui/useClock';
import { TableBox, usePhone } from '../../ui/TableBox';

type Entry = paths['/api/audit-log']['get']['responses'][200]['content']['application/json']['data'][number];

const PAGE = 50;
const VIA: Record<Entry['via'], { label: string; color: string }> = {
  session: { label: 'dashboard', color: 'blue' },
  api_key: { label: 'API key', color: 'grape' },
  system: { label: 'system', color: 'gray' },
  anonymous: { label: 'not signed in', color: 'orange' },
};

const who = (e: Entry) => e.actor_name || e.actor_email || e.actor_id || (e.via === 'system' ? 'Leadgate' : '—');

/** The kinds of record an entry is about, as the menu names them. */
const KIND: Record<string, string> = {
  operator: 'Operator',
  partner: 'Partner',
  flow: 'Flow',
  campaign: 'Campaign',
  traffic_provider: 'Traffic provider',
  role: 'Role',
  api_key: 'API key',
  lead: 'Lead',
  backup: 'Backup',
  session: 'Session',
  licence: 'Licence',
};

/** "Partner Taker Ltd", with the ids in the tooltip; the id itself when there is no name. */
function Target({ e }: { e: Entry }) {
  if (!e.target_type) return <>—</>;
  const kind = KIND[e.target_type] ?? e.target_type;
  return (
    <Text size="sm" title={e.target_id ? `${e.target_type} ${e.target_id}` : undefined} data-testid="audit-target">
      {kind}{' '}
      {e.target_name ? (
        <Text span fw={500} inherit>
          {e.target_name}
        </Text>
      ) : (
        <Text span ff="monospace" inherit>
          {e.target_id ?? ''}
        </Text>
      )}
    </Text>
  );
}

/** /audit: security events, newest first; the filters live in the URL so a view can be shared. */
export default function AuditLog() {
  const clock = useClock();
  const [params, setParams] = useSearchParams();
  const action = params.get('action') ?? '';
  const actorId = params.get('actor_id') ?? '';
  const [open, setOpen] = useState<string | null>(null);
  const phone = usePhone();

  const entries = usePagedList(['audit-log', action, actorId], async (cursor) =>
    must(
      await api.GET('/api/audit-log', {
        params: { query: { limit: PAGE, cursor, action: action || undefined, actor_id: actorId || undefined } },
      }),
    ),
  );
  const rows = entries.data?.pages.flatMap((p) => p.data) ?? [];

  function setFilters(patch: { action?: string; actor_id?: string }) {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(patch)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    setParams(next);
  }

  return (
    <Stack>
      <Title order={1} size="h2">
        Audit log
      </Title>
      <Text size="sm" c="dimmed">
        Sign-ins, key and permission changes, and every change to flows, partners, campaigns, providers and settings:
        who did it, from where, and when.
      </Text>
      <AuditFilters action={action} actorId={actorId} onChange={setFilters} />
      {entries.isError && (
        <Alert color="red" role="alert">
          {problemText(entries.error)}
        </Alert>
      )}
      {entries.isPending ? (
        <Loading />
      ) : rows.length === 0 && !entries.isError ? (
        <Text data-testid="audit-empty">{action || actorId ? 'No events match these filters.' : 'No events yet.'}</Text>
      ) : (
        <TableBox minWidth={900}>
          <Table data-testid="audit-table" verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Time ({clock.zone})</Table.Th>
                <Table.Th visibleFrom="sm">Operator</Table.Th>
                <Table.Th>Action</Table.Th>
                <Table.Th visibleFrom="sm">Target</Table.Th>
                <Table.Th visibleFrom="sm">IP</Table.Th>
                <Table.Th>Details</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((e) => {
                const hasDetails = Object.keys(e.details).length > 0;
                const expanded = open === e.id;
                return (
                  <Fragment key={e.id}>
                    <Table.Tr data-testid="audit-row">
                      <Table.Td style={{ whiteSpace: phone ? undefined : 'nowrap' }}>{clock.dateTime(e.at)}</Table.Td>
                      <Table.Td visibleFrom="sm">
                        <Group gap={6} wrap="nowrap">
                          <Text
                            size="sm"
                            title={[e.actor_email, e.actor_id].filter(Boolean).join(' · ') || undefined}
                            data-testid="audit-actor"
                          >
                            {who(e)}
                          </Text>
                          <Badge size="xs" variant="light" color={VIA[e.via].color}>
                            {VIA[e.via].label}
                          </Badge>
                        </Group>
                      </Table.Td>
                      <Table.Td>
                        <Code data-testid="audit-action">{e.action}</Code>
                      </Table.Td>
                      <Table.Td visibleFrom="sm">
                        <Target e={e} />
                      </Table.Td>
                      <Table.Td visibleFrom="sm">
                        <Text size="sm" ff="monospace">
                          {e.ip ?? '—'}
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        {hasDetails ? (
                          <UnstyledButton
                            aria-expanded={expanded}
                            onClick={() => setOpen(expanded ? null : e.id)}
                            fz="sm"
                            c="blue"
                          >
                            {expanded ? 'Hide' : 'Show'}
                          </UnstyledButton>
                        ) : (
                          <Text size="sm" c="dimmed">
                            —
                          </Text>
                        )}
                      </Table.Td>
                    </Table.Tr>
                    {expanded && (
                      <Table.Tr>
                        <Table.Td colSpan={6}>
                          <Code block data-testid="audit-details">
                            {JSON.stringify(e.details, null, 2)}
                          </Code>
                        </Table.Td>
                      </Table.Tr>
                    )}
                  </Fragment>
                );
              })}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
      {entries.hasNextPage && (
        <Group justify="center">
          <Button variant="default" onClick={() => entries.fetchNextPage()} loading={entries.isFetchingNextPage}>
            Load more
          </Button>
        </Group>
      )}
    </Stack>
  );
}
