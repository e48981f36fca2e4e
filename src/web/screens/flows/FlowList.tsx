import { Alert, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { useWhoami } from '../../whoami';

export default function FlowList() {
  const navigate = useNavigate();
  const whoami = useWhoami();
  const flows = useInfiniteQuery({
    queryKey: ['flows'],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) => must(await api.GET('/api/flows', { params: { query: { limit: 100, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const canEdit = whoami.data?.permissions.includes('flows:edit') ?? false;
  const rows = flows.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Flows</Title>
        <Button onClick={() => navigate('/flows/new')} disabled={!canEdit}>
          New flow
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        A flow decides which partners a campaign's leads are offered to: lower priority first, sharing by weight within a priority.
      </Text>
      {flows.isError && (
        <Alert color="red" role="alert">
          {problemText(flows.error)}
        </Alert>
      )}
      {flows.isPending ? (
        <Loading />
      ) : rows.length === 0 && !flows.isError ? (
        <Text data-testid="flows-empty">There are no flows yet.{canEdit && ' Make one with “New flow”.'}</Text>
      ) : (
        <Table.ScrollContainer minWidth={800}>
          <Table striped highlightOnHover data-testid="flows-table">
            <Table.Thead>
              <Table.Tr>
                {['Name', 'Status', 'Max attempts', 'Targets', 'Partners'].map((h) => (
                  <Table.Th key={h}>{h}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((f) => (
                <Table.Tr key={f.id} data-testid="flow-row">
                  <Table.Td>
                    <Text component={Link} to={`/flows/${f.id}`} fw={500} c="blue">
                      {f.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={f.status === 'active' ? 'green' : 'gray'}>{f.status}</Badge>
                  </Table.Td>
                  <Table.Td>{f.max_attempts}</Table.Td>
                  <Table.Td>{f.targets.length}</Table.Td>
                  <Table.Td>{f.targets.map((t) => t.partner_name).join(', ') || '—'}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {flows.hasNextPage && (
        <Button variant="default" onClick={() => flows.fetchNextPage()} loading={flows.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
