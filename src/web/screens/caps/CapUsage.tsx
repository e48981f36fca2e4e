import { Alert, Anchor, Group, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import type { paths } from '../../api/schema';
import { api, must, problemText } from '../../api/client';
import { liveQueryOptions, LiveStatus, useLivePause } from '../../ui/LiveRefresh';
import { TableBox } from '../../ui/TableBox';

type Usage = paths['/api/routing/cap-usage']['get']['responses'][200]['content']['application/json'];
type Row = Usage['data'][number];
type Use = Row['day'];

/** Columns hidden on a phone: the partner, the country and today's use stay. */
const WIDE_ONLY = ['Where', 'Counts', 'This hour', 'In all'];

/** "7 / 10" with a bar; full in red (a colour that keeps contrast), none as a dash. */
function UseCell({ use, label }: { use: Use; label: string }) {
  if (!use) return <Text c="dimmed">—</Text>;
  const ratio = use.cap === 0 ? 1 : Math.min(1, use.used / use.cap);
  return (
    <Stack gap={2} miw={110}>
      <Text size="sm" c={ratio >= 1 ? 'red.8' : undefined} data-testid="cap-use">
        {use.used} / {use.cap}
      </Text>
      <Progress
        value={ratio * 100}
        color={ratio >= 1 ? 'red.8' : ratio >= 0.9 ? 'orange.8' : 'blue.7'}
        size="sm"
        aria-label={`${label}: ${use.used} of ${use.cap}`}
      />
    </Stack>
  );
}

/** /caps: each partner's caps, its flow targets' and their countries', used / cap today, this hour and in all, live. */
export default function CapUsage() {
  const [paused, setPaused] = useLivePause('caps');
  const usage = useQuery({
    queryKey: ['cap-usage'],
    queryFn: async () => must(await api.GET('/api/routing/cap-usage')),
    ...liveQueryOptions(paused),
  });
  const rows = usage.data?.data ?? [];
  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Cap usage
        </Title>
        <LiveStatus
          updatedAt={usage.dataUpdatedAt}
          fetching={usage.isFetching}
          paused={paused}
          onPausedChange={setPaused}
          onRefresh={() => usage.refetch()}
        />
      </Group>
      <Text size="sm" c="dimmed">
        Days and hours are each partner's own (its working hours' time zone, else UTC). Deliveries in progress count as
        used; caps counted on FTDs count FTDs recorded.
      </Text>
      {usage.isError && <Alert color="red">{problemText(usage.error)}</Alert>}
      {usage.isSuccess && rows.length === 0 && (
        <Text data-testid="caps-empty">No partner or flow target has a cap.</Text>
      )}
      {rows.length > 0 && (
        <TableBox minWidth={800}>
          <Table data-testid="caps-table" verticalSpacing="xs">
            <Table.Thead>
              <Table.Tr>
                {['Partner', 'Where', 'Country', 'Counts', 'Today', 'This hour', 'In all'].map((h) => (
                  <Table.Th key={h} visibleFrom={WIDE_ONLY.includes(h) ? 'sm' : undefined}>
                    {h}
                  </Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((r) => (
                <Table.Tr key={`${r.partner_id}.${r.target_id ?? ''}.${r.country ?? ''}`} data-testid="caps-row">
                  <Table.Td>
                    <Anchor component={Link} to={`/partners/${r.partner_id}`}>
                      {r.partner_name}
                    </Anchor>
                  </Table.Td>
                  <Table.Td visibleFrom="sm">
                    {r.flow_id ? (
                      <Anchor component={Link} to={`/flows/${r.flow_id}`}>
                        Flow {r.flow_name}
                      </Anchor>
                    ) : (
                      'Partner caps'
                    )}
                  </Table.Td>
                  <Table.Td>{r.country ?? 'All'}</Table.Td>
                  <Table.Td visibleFrom="sm">{r.counts === 'ftds' ? 'FTDs' : 'Leads'}</Table.Td>
                  <Table.Td>
                    <UseCell use={r.day} label={`${r.partner_name}, today`} />
                  </Table.Td>
                  <Table.Td visibleFrom="sm">
                    <UseCell use={r.hour} label={`${r.partner_name}, this hour`} />
                  </Table.Td>
                  <Table.Td visibleFrom="sm">
                    <UseCell use={r.total} label={`${r.partner_name}, in all`} />
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </TableBox>
      )}
    </Stack>
  );
}
