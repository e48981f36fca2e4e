import { Badge, Code, Table, Text } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { ListPage, usePagedList } from '../../ui/ListPage';

export default function ProviderList() {
  const whoami = useWhoami();
  const providers = usePagedList(['traffic-providers'], async (cursor) =>
    must(
      await api.GET('/api/traffic-providers', { params: { query: { limit: 100, cursor, include_archived: false } } }),
    ),
  );
  const canEdit = whoami.data?.permissions.includes('traffic_providers:edit') ?? false;

  return (
    <ListPage
      title="Traffic providers"
      create={{ label: 'New provider', to: '/traffic-providers/new', allowed: canEdit }}
      intro="A traffic provider sends leads to Leadgate with its own intake token; its campaigns decide where the leads go."
      list={providers}
      empty={<>There are no traffic providers yet.{canEdit && ' Add one with “New provider”.'}</>}
      testId="providers"
      headers={['Name', 'Status', 'Token', 'Allowed IPs', 'Duplicates']}
      wideOnly={['Token', 'Allowed IPs', 'Duplicates']}
      row={(p) => (
        <Table.Tr key={p.id} data-testid="provider-row">
          <Table.Td>
            <Text component={Link} to={`/traffic-providers/${p.id}`} fw={500} c="blue">
              {p.name}
            </Text>
          </Table.Td>
          <Table.Td>
            <Badge color={p.status === 'active' ? 'green' : 'gray'}>{p.status}</Badge>
          </Table.Td>
          <Table.Td visibleFrom="sm">
            <Code>{p.token_prefix}…</Code>
          </Table.Td>
          <Table.Td visibleFrom="sm">{p.allowed_ips.length ? p.allowed_ips.join(', ') : 'Any address'}</Table.Td>
          <Table.Td visibleFrom="sm">
            {p.duplicate_policy.fields.length
              ? `${p.duplicate_policy.fields.join(' or ')}, ${p.duplicate_policy.window_hours} h, ${p.duplicate_policy.scope}`
              : 'No check'}
          </Table.Td>
        </Table.Tr>
      )}
    />
  );
}
