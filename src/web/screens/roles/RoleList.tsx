import { Badge, Group, Table, Text } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { ListPage, usePagedList } from '../../ui/ListPage';

export default function RoleList() {
  const whoami = useWhoami();
  const roles = usePagedList(['roles'], async (cursor) =>
    must(await api.GET('/api/roles', { params: { query: { limit: 100, cursor } } })),
  );
  const canEdit = whoami.data?.permissions.includes('roles:edit') ?? false;

  return (
    <ListPage
      title="Roles"
      create={{ label: 'New role', to: '/settings/roles/new', allowed: canEdit }}
      intro="A role is the set of permissions its operators hold. Every operator has one role; their API keys can hold at most what it grants."
      list={roles}
      // The admin role always exists, so this is only seen by a viewer of a broken installation.
      empty="There are no roles."
      testId="roles"
      headers={['Name', 'Description', 'Permissions']}
      wideOnly={['Permissions']}
      minWidth={700}
      row={(r) => (
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
          <Table.Td visibleFrom="sm">
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
      )}
    />
  );
}
