import { Alert, Badge, Button, Group, Stack, Table, Text, Title } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { Link, useNavigate } from 'react-router-dom';
import { api, must, problemText } from '../../api/client';
import { Loading } from '../../Loading';
import { useWhoami } from '../../whoami';
import { hoursText } from './form';

export default function PartnerList() {
  const navigate = useNavigate();
  const whoami = useWhoami();
  const partners = useInfiniteQuery({
    queryKey: ['partners', 'list'],
    initialPageParam: undefined as string | undefined,
    queryFn: async ({ pageParam }) => must(await api.GET('/api/partners', { params: { query: { limit: 100, cursor: pageParam } } })),
    getNextPageParam: (page) => page.next_cursor ?? undefined,
  });
  const canEdit = whoami.data?.permissions.includes('partners:edit') ?? false;
  const rows = partners.data?.pages.flatMap((p) => p.data) ?? [];

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={2}>Partners</Title>
        <Button onClick={() => navigate('/partners/new')} disabled={!canEdit}>
          New partner
        </Button>
      </Group>
      <Text size="sm" c="dimmed">
        A partner is a buyer that leads are delivered to through its own HTTP API, within its countries, working hours and caps.
      </Text>
      {partners.isError && (
        <Alert color="red" role="alert">
          {problemText(partners.error)}
        </Alert>
      )}
      {partners.isPending ? (
        <Loading />
      ) : rows.length === 0 && !partners.isError ? (
        <Text data-testid="partners-empty">There are no partners yet.{canEdit && ' Add one with “New partner”.'}</Text>
      ) : (
        <Table.ScrollContainer minWidth={800}>
          <Table striped highlightOnHover data-testid="partners-table">
            <Table.Thead>
              <Table.Tr>
                {['Name', 'Status', 'Countries', 'Caps (daily / total)', 'Working hours'].map((h) => (
                  <Table.Th key={h}>{h}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((p) => (
                <Table.Tr key={p.id} data-testid="partner-row">
                  <Table.Td>
                    <Text component={Link} to={`/partners/${p.id}`} fw={500} c="blue">
                      {p.name}
                    </Text>
                  </Table.Td>
                  <Table.Td>
                    <Badge color={p.status === 'active' ? 'green' : 'gray'}>{p.status}</Badge>
                  </Table.Td>
                  <Table.Td>{p.countries.join(', ') || 'All'}</Table.Td>
                  <Table.Td>
                    {p.daily_cap ?? '—'} / {p.total_cap ?? '—'}
                  </Table.Td>
                  <Table.Td>{hoursText(p.working_hours)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      )}
      {partners.hasNextPage && (
        <Button variant="default" onClick={() => partners.fetchNextPage()} loading={partners.isFetchingNextPage}>
          Load more
        </Button>
      )}
    </Stack>
  );
}
