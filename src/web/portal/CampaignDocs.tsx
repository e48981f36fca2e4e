import { Alert, Badge, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, must, problemText } from '../api/client';
import { Loading } from '../Loading';
import { CopyValueButton } from '../ui/CopyValueButton';
import { TableBox } from '../ui/TableBox';

/** A campaign's intake documentation: the request, every field, a curl example to copy, every answer. */
export function CampaignDocs({ campaignId }: { campaignId: string }) {
  const docs = useQuery({
    queryKey: ['portal-campaign-docs', campaignId],
    queryFn: async () =>
      must(await api.GET('/api/portal/campaigns/{id}/docs', { params: { path: { id: campaignId } } })),
  });
  if (docs.isPending) return <Loading />;
  if (docs.isError)
    return (
      <Alert color="red" role="alert">
        {problemText(docs.error)}
      </Alert>
    );
  const d = docs.data;
  return (
    <Stack data-testid="campaign-docs">
      <Text size="sm" ff="monospace" style={{ wordBreak: 'break-all' }}>
        {d.method} {d.url}
      </Text>
      <Title order={3} size="h5">
        Headers
      </Title>
      {d.headers.map((h) => (
        <Text key={h.name} size="sm">
          <Code>{h.name}</Code> {h.required ? '(required)' : '(optional)'}: {h.description}
        </Text>
      ))}
      <Title order={3} size="h5">
        Fields
      </Title>
      <TableBox minWidth={640}>
        <Table striped>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Field</Table.Th>
              <Table.Th>Rules</Table.Th>
              <Table.Th visibleFrom="sm">Example</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {d.fields.map((f) => (
              <Table.Tr key={f.name}>
                <Table.Td>
                  <Code>{f.name}</Code>
                  {f.required && (
                    <Badge size="xs" ml={4} variant="light">
                      required
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{f.description}</Text>
                </Table.Td>
                <Table.Td visibleFrom="sm" style={{ wordBreak: 'break-all' }}>
                  {f.example ?? '—'}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </TableBox>
      <Group justify="space-between">
        <Title order={3} size="h5">
          Try it
        </Title>
        <CopyValueButton value={d.curl} size="xs" />
      </Group>
      <Code block style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all' }} data-testid="campaign-curl">
        {d.curl}
      </Code>
      <Title order={3} size="h5">
        Answers
      </Title>
      {d.answers.map((a, i) => (
        <Text key={i} size="sm">
          <Code>
            {a.http_status} {a.status ?? a.code ?? ''}
          </Code>{' '}
          {a.description}
        </Text>
      ))}
    </Stack>
  );
}
