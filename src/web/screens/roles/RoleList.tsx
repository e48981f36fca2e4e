import { Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router-dom';
import { api, must } from '../../api/client';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';

export default function RoleList() {
  const navigate = useNavigate();
  const whoami = useWhoami();
  const roles = useInfiniteQuery({
    queryKey: ['roles'],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) => must(await api.GET('/api/roles', { params: { query: { limit: 100, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const canEdit = whoami.data?.permissions.includes('roles:edit') ?? false;
  const rows = roles.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Roles</Title>
        <Button onClick={() => navigate('/settings/roles/new')} disabled={!canEdit}>
          New role
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        A role is the set of permissions its operators hold. Every operator has one role; their API keys can hold at most what it grants.
      </Text>
      {roles.isError && <ErrorAlert error={roles.error} />}
      {roles.isPending ? (
        <Loading />
      ) : rows.length === 0 && !roles.isError ? (
        // The admin role always exists, so this is only seen by a viewer of a broken installation.
        <Text data-testid="roles-empty">There are no roles.</Text>
      ) : (
        <Table.ScrollContainer minWidth={700}>
          <Table striped highlightOnHover data-testid="roles-table">
            <Table.Thead>
              <Table.Tr>
                {['Name', 'Description', 'Permissions'].map((h) => (
                  <Table.Th key={h}>{h}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((r) => (
                <Table.Tr key={r.id} data-testid="role-row">
                  <Table.Td>
                    <Group gap="xs">
                      <Text component={Link} to={`/settings/roles/${r.id}`} fw={500} c="blue">
                        {r.name}
                      </Text>
                      {r.builtin && <Badge color="gray">built-in</Badge>}
                    </Group>
                  </Table.Td>
                  <Table.Td>{r.description || '—'}</Table.Td>
                  <Table.Td>
                    {r.builtin ? (
                      'All'
                    ) : r.permissions.length === 0 ? (
                      <Text c="dimmed" size="sm">
                        None
                      </Text>
                    ) : (
                      <Text size="sm">{r.permissions.join(', ')}</Text>
                    )}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {roles.hasNextPage && (
        <Button variant="default" onClick={() => roles.fetchNextPage()} loading={roles.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
