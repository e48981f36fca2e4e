import { Alert, Button, Group, Select, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, must, problemText } from '../api/client';
import { Loading } from '../Loading';
import { saveAnswer } from '../ui/download';
import { TableBox } from '../ui/TableBox';
import { usePortalMe } from './me';
import { money, type GroupBy, type StatsQuery } from './types';

const GROUPS: { value: GroupBy; label: string }[] = [
  { value: 'day', label: 'Day' },
  { value: 'week', label: 'Week' },
  { value: 'month', label: 'Month' },
  { value: 'campaign', label: 'Campaign' },
  { value: 'country', label: 'Country' },
  ...([1, 2, 3, 4, 5] as const).map((n) => ({ value: `sub_id${n}` as GroupBy, label: `Sub id ${n}` })),
];
const percent = (rate: number) => `${(rate * 100).toFixed(1)} %`;

/** The provider's statistics: grouped by day … sub id over a date range, in its own zone; CSV. */
export default function PortalStats() {
  const me = usePortalMe().data!;
  const [query, setQuery] = useState<StatsQuery>({ group_by: 'day' });
  const stats = useQuery({
    queryKey: ['portal-stats', query],
    queryFn: async () =>
      must(await api.GET('/api/portal/stats', { params: { query } }), { date_from: 'From', date_to: 'To' }),
  });
  const csv = useMutation({
    mutationFn: async () =>
      saveAnswer(await api.GET('/api/portal/stats/export.csv', { params: { query }, parseAs: 'blob' }), 'stats.csv'),
  });
  const set = (patch: Partial<StatsQuery>) =>
    setQuery((q) => Object.fromEntries(Object.entries({ ...q, ...patch }).filter(([, v]) => v)) as StatsQuery);
  const showPayout = me.shows.payout;
  const data = stats.data;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Statistics
        </Title>
        <Button variant="default" onClick={() => csv.mutate()} loading={csv.isPending} data-testid="portal-stats-csv">
          Download CSV
        </Button>
      </Group>
      <SimpleGrid cols={{ base: 1, xs: 3 }} maw={720}>
        <Select
          label="Group by"
          data={GROUPS}
          value={query.group_by ?? 'day'}
          onChange={(v) => set({ group_by: (v as GroupBy) ?? 'day' })}
          allowDeselect={false}
        />
        <TextInput
          label="From"
          type="date"
          value={query.date_from ?? ''}
          onChange={(e) => set({ date_from: e.currentTarget.value })}
        />
        <TextInput
          label="To"
          type="date"
          value={query.date_to ?? ''}
          onChange={(e) => set({ date_to: e.currentTarget.value })}
        />
      </SimpleGrid>
      {data && (
        <Text size="xs" c="dimmed" data-testid="zone-note">
          Days, weeks and months in {data.timezone}; the last 30 days unless a range is chosen.
        </Text>
      )}
      {[stats, csv].map(
        (q, i) =>
          q.isError && (
            <Alert key={i} color="red" role="alert">
              {problemText(q.error)}
            </Alert>
          ),
      )}
      {stats.isPending ? (
        <Loading />
      ) : data && data.rows.length === 0 ? (
        <Text data-testid="portal-stats-empty">No leads in this range.</Text>
      ) : data ? (
        <TableBox minWidth={640}>
          <Table striped data-testid="portal-stats">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{GROUPS.find((g) => g.value === data.group_by)?.label ?? 'Group'}</Table.Th>
                <Table.Th ta="right">Leads</Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Accepted
                </Table.Th>
                <Table.Th ta="right">FTDs</Table.Th>
                <Table.Th ta="right" visibleFrom="sm">
                  Conversion
                </Table.Th>
                {showPayout && <Table.Th ta="right">Payout</Table.Th>}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {[...data.rows, { ...data.totals, key: '__totals', label: 'Total' }].map((r) => (
                <Table.Tr
                  key={r.key ?? r.label}
                  data-testid="portal-stats-row"
                  fw={r.key === '__totals' ? 700 : undefined}
                >
                  <Table.Td style={{ wordBreak: 'break-all' }}>{r.label}</Table.Td>
                  <Table.Td ta="right">{r.leads}</Table.Td>
                  <Table.Td ta="right" visibleFrom="sm">
                    {r.accepted}
                  </Table.Td>
                  <Table.Td ta="right">{r.ftds}</Table.Td>
                  <Table.Td ta="right" visibleFrom="sm">
                    {percent(r.conversion_rate)}
                  </Table.Td>
                  {showPayout && <Table.Td ta="right">{money(r.payout_cents, r.currency)}</Table.Td>}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      ) : null}
    </Stack>
  );
}
