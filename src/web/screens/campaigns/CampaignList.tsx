import { Badge, Table, Text } from '@mantine/core';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { useWhoami } from '../../whoami';
import { ListPage, usePagedList } from '../../ui/ListPage';

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

export default function CampaignList() {
  const whoami = useWhoami();
  const campaigns = usePagedList(['campaigns'], async (cursor) =>
    must(await api.GET('/api/campaigns', { params: { query: { limit: 100, cursor, include_archived: false } } })),
  );
  const canEdit = whoami.data?.permissions.includes('campaigns:edit') ?? false;

  return (
    <ListPage
      title="Campaigns"
      create={{ label: 'New campaign', to: '/campaigns/new', allowed: canEdit }}
      intro="A campaign ties a traffic provider's leads to a flow, and says what the provider is paid."
      list={campaigns}
      empty={<>There are no campaigns yet.{canEdit && ' Make one with “New campaign”.'}</>}
      testId="campaigns"
      headers={['Name', 'Status', 'Traffic provider', 'Flow', 'Countries', 'Payout']}
      wideOnly={['Traffic provider', 'Flow', 'Countries']}
      row={(c) => (
        <Table.Tr key={c.id} data-testid="campaign-row">
          <Table.Td>
            <Text component={Link} to={`/campaigns/${c.id}`} fw={500} c="blue">
              {c.name}
            </Text>
          </Table.Td>
          <Table.Td>
            <Badge color={c.status === 'active' ? 'green' : 'gray'}>{c.status}</Badge>
          </Table.Td>
          <Table.Td visibleFrom="sm">{c.traffic_provider_name}</Table.Td>
          <Table.Td visibleFrom="sm">
            {c.flow_name ?? (
              <Text c="dimmed" size="sm">
                Not routed
              </Text>
            )}
          </Table.Td>
          <Table.Td visibleFrom="sm">{c.countries.join(', ') || 'All'}</Table.Td>
          <Table.Td>
            {usd.format(c.payout.amount)} {c.payout.model.toUpperCase()}
          </Table.Td>
        </Table.Tr>
      )}
    />
  );
}
