import { Alert, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { useWhoami } from '../../whoami';

const usd = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' });

export default function CampaignList() {
  const navigate = useNavigate();
  const whoami = useWhoami();
  const campaigns = useInfiniteQuery({
    queryKey: ['campaigns'],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) =>
      must(await api.GET('/api/campaigns', { params: { query: { limit: 100, cursor: pageParam, include_archived: false } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const canEdit = whoami.data?.permissions.includes('campaigns:edit') ?? false;
  const rows = campaigns.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Campaigns</Title>
        <Button onClick={() => navigate('/campaigns/new')} disabled={!canEdit}>
          New campaign
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        A campaign ties a traffic provider's leads to a flow, and says what the provider is paid.
      </Text>
      {campaigns.isError && (
        <Alert color="red" role="alert">
          {problemText(campaigns.error)}
        </Alert>
      )}
      {campaigns.isPending ? (
        <Loading />
      ) : rows.length === 0 && !campaigns.isError ? (
        <Text data-testid="campaigns-empty">There are no campaigns yet.{canEdit && ' Make one with “New campaign”.'}</Text>
      ) : (
        <Table.ScrollContainer minWidth={800}>
          <Table striped highlightOnHover data-testid="campaigns-table">
            <Table.Thead>
              <Table.Tr>
                {['Name', 'Status', 'Traffic provider', 'Flow', 'Countries', 'Payout'].map((h) => (
                  <Table.Th key={h}>{h}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((c) => (
                <Table.Tr key={c.id} data-testid="campaign-row">
                  <Table.Td>
                    <Text component={Link} to={`/campaigns/${c.id}`} fw={500} c="blue">
                      {c.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={c.status === 'active' ? 'green' : 'gray'}>{c.status}</Badge>
                  </Table.Td>
                  <Table.Td>{c.traffic_provider_name}</Table.Td>
                  <Table.Td>{c.flow_name ?? <Text c="dimmed" size="sm">Not routed</Text>}</Table.Td>
                  <Table.Td>{c.countries.join(', ') || 'All'}</Table.Td>
                  <Table.Td>
                    {usd.format(c.payout.amount)} {c.payout.model.toUpperCase()}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {campaigns.hasNextPage && (
        <Button variant="default" onClick={() => campaigns.fetchNextPage()} loading={campaigns.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
