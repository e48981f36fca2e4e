import { Alert, Badge, Button, Code, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { useWhoami } from '../../whoami';

export default function ProviderList() {
  const navigate = useNavigate();
  const whoami = useWhoami();
  const providers = useInfiniteQuery({
    queryKey: ['traffic-providers'],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      must(await api.GET('/api/traffic-providers', { params: { query: { limit: 100, cursor: pageParam, include_archived: false } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const canEdit = whoami.data?.permissions.includes('traffic_providers:edit') ?? false;
  const rows = providers.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Traffic providers</Title>
        <Button onClick={() => navigate('/traffic-providers/new')} disabled={!canEdit}>
          New provider
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        A traffic provider sends leads to Leadgate with its own intake token; its campaigns decide where the leads go.
      </Text>
      {providers.isError && (
        <Alert color="red" role="alert">
          {problemText(providers.error)}
        </Alert>
      )}
      {providers.isPending ? (
        <Loading />
      ) : rows.length === 0 && !providers.isError ? (
        <Text data-testid="providers-empty">There are no traffic providers yet.{canEdit && ' Add one with “New provider”.'}</Text>
      ) : (
        <Table.ScrollContainer minWidth={800}>
          <Table striped highlightOnHover data-testid="providers-table">
            <Table.Thead>
              <Table.Tr>
                {['Name', 'Status', 'Token', 'Allowed IPs', 'Duplicates'].map((h) => (
                  <Table.Th key={h}>{h}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((p) => (
                <Table.Tr key={p.id} data-testid="provider-row">
                  <Table.Td>
                    <Text component={Link} to={`/traffic-providers/${p.id}`} fw={500} c="blue">
                      {p.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={p.status === 'active' ? 'green' : 'gray'}>{p.status}</Badge>
                  </Table.Td>
                  <Table.Td>
                    <Code>{p.token_prefix}…</Code>
                  </Table.Td>
                  <Table.Td>{p.allowed_ips.length ? p.allowed_ips.join(', ') : 'Any address'}</Table.Td>
                  <Table.Td>
                    {p.duplicate_policy.fields.length
                      ? `${p.duplicate_policy.fields.join(' or ')}, ${p.duplicate_policy.window_hours} h, ${p.duplicate_policy.scope}`
                      : 'No check'}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {providers.hasNextPage && (
        <Button variant="default" onClick={() => providers.fetchNextPage()} loading={providers.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
