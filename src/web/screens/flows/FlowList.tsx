import { Badge, Table, Text } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { ListPage, usePagedList } from '../../ui/ListPage';

export default function FlowList() {
  const whoami = useWhoami();
  const flows = usePagedList(['flows'], async (cursor) =>
    must(await api.GET('/api/flows', { params: { query: { limit: 100, cursor } } })),
  );
  const canEdit = whoami.data?.permissions.includes('flows:edit') ?? false;

  return (
    <ListPage
      title="Flows"
      create={{ label: 'New flow', to: '/flows/new', allowed: canEdit }}
      intro="A flow decides which partners a campaign's leads are offered to: lower priority first, sharing by weight within a priority."
      list={flows}
      empty={<>There are no flows yet.{canEdit && ' Make one with “New flow”.'}</>}
      testId="flows"
      headers={['Name', 'Status', 'Max attempts', 'Targets', 'Partners']}
      wideOnly={['Max attempts', 'Targets']}
      row={(f) => (
        <Table.Tr key={f.id} data-testid="flow-row">
          <Table.Td>
            <Text component={Link} to={`/flows/${f.id}`} fw={500} c="blue">
              {f.name}
            </Text>
          </Table.Td>
          <Table.Td>
            <Badge color={f.status === 'active' ? 'green' : 'gray'}>{f.status}</Badge>
          </Table.Td>
          <Table.Td visibleFrom="sm">{f.max_attempts}</Table.Td>
          <Table.Td visibleFrom="sm">{f.targets.length}</Table.Td>
          <Table.Td>{f.targets.map((t) => t.partner_name).join(', ') || '—'}</Table.Td>
        </Table.Tr>
      )}
    />
  );
}
