import { Anchor, Card, Group, List, SimpleGrid, Stack, Table, Text, Title } from '@mantine/core';
import { useIsFetching, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { api, must } from '../../api/client';
import { Loading } from '../../Loading';
import { ErrorAlert } from '../../ui/EditorPage';
import { useWhoami } from '../../whoami';
import { formatCount, type Dimension } from '../analytics/report';
import { LEADS_AND_FTDS, ReportChart } from '../analytics/ReportChart';
import { KpiRow } from './Kpis';
import { dayIn } from '../../ui/clock';
import { FirstRun } from './FirstRun';
import { PartnerHealthCard } from './PartnerHealthCard';
import { SECTIONS, visible } from '../../nav';
import { liveQueryOptions, LiveStatus, useLivePause } from '../../ui/LiveRefresh';

/** The queries of this screen (KPIs and reports), refreshed together. */
const isOverviewQuery = (key: readonly unknown[]) => key[0] === 'analytics-summary' || key[0] === 'analytics-report';
type Live = ReturnType<typeof liveQueryOptions>;

/** The report of the last 30 days (the API's default range) grouped by one dimension. */
function useReport(groupBy: Dimension, live: Live) {
  return useQuery({
    queryKey: ['analytics-report', `group_by=${groupBy}`],
    queryFn: async () => must(await api.GET('/api/analytics/report', { params: { query: { group_by: groupBy } } })),
    ...live,
  });
}

/** The five partners or providers with the most leads; leads that never got one are not a "top" entry. */
function TopList({
  title,
  groupBy,
  testId,
  live,
}: {
  title: string;
  groupBy: 'partner' | 'traffic_provider';
  testId: string;
  live: Live;
}) {
  const report = useReport(groupBy, live);
  const rows = (report.data?.rows ?? []).filter((r) => r.key !== null).slice(0, 5);
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        {title}
      </Title>
      {report.isPending ? (
        <Loading />
      ) : report.isError ? (
        <ErrorAlert error={report.error} />
      ) : rows.length === 0 ? (
        <Text c="dimmed">None in the last 30 days.</Text>
      ) : (
        <Table data-testid={testId}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Name</Table.Th>
              <Table.Th ta="right">Leads</Table.Th>
              <Table.Th ta="right">Delivered</Table.Th>
              <Table.Th ta="right">FTDs</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {rows.map((r) => (
              <Table.Tr key={r.key} data-testid="top-row" data-key={r.key}>
                <Table.Td>{r.label}</Table.Td>
                <Table.Td ta="right">{formatCount(r.leads)}</Table.Td>
                <Table.Td ta="right">{formatCount(r.delivered)}</Table.Td>
                <Table.Td ta="right">{formatCount(r.ftds)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      )}
    </Card>
  );
}

function Dashboard({ timezone }: { timezone: string }) {
  const today = dayIn(timezone);
  const [paused, setPaused] = useLivePause('overview');
  const live = liveQueryOptions(paused);
  const days = useReport('day', live);
  const empty = days.data?.totals.leads === 0;
  const queryClient = useQueryClient();
  const fetching = useIsFetching({ predicate: (q) => isOverviewQuery(q.queryKey) }) > 0;

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Overview
        </Title>
        <Group>
          <LiveStatus
            updatedAt={days.dataUpdatedAt}
            fetching={fetching}
            paused={paused}
            onPausedChange={setPaused}
            onRefresh={() =>
              void queryClient.refetchQueries({ predicate: (q) => isOverviewQuery(q.queryKey), type: 'active' })
            }
          />
          <Anchor component={Link} to="/analytics" size="sm">
            Open analytics →
          </Anchor>
        </Group>
      </Group>
      <FirstRun />
      <PartnerHealthCard />
      <KpiRow id="today" title="Today" query={{ date_from: today, date_to: today }} live={live} />
      <KpiRow id="30d" title="Last 30 days" query={{}} live={live} />
      {days.isError && <ErrorAlert error={days.error} />}
      {days.isPending ? (
        <Loading />
      ) : empty ? (
        <Card withBorder data-testid="overview-empty">
          <Title order={2} size="h4">
            No leads in the last 30 days
          </Title>
          <Text c="dimmed" mt="xs">
            The chart and the top partners and traffic providers appear here once leads arrive: add a traffic provider
            and a campaign, and send leads to the intake API (see the API docs).
          </Text>
        </Card>
      ) : days.data ? (
        <>
          <Card withBorder>
            <Title order={2} size="h4" mb="xs">
              Leads and FTDs per day
            </Title>
            <ReportChart rows={days.data.rows} groupBy="day" series={LEADS_AND_FTDS} h={260} />
          </Card>
          <SimpleGrid cols={{ base: 1, md: 2 }}>
            <TopList title="Top partners" groupBy="partner" testId="top-partners" live={live} />
            <TopList title="Top traffic providers" groupBy="traffic_provider" testId="top-providers" live={live} />
          </SimpleGrid>
        </>
      ) : null}
    </Stack>
  );
}

// Where an operator without analytics can go instead (the same permissions the menu checks).

function Welcome({ name, permissions }: { name: string; permissions: string[] }) {
  // Everything in the menu this operator may open, but the screens that need analytics.
  const links = visible(
    SECTIONS.flatMap((s) => s.links),
    permissions,
  ).filter((l) => l.permission !== 'analytics:view');
  return (
    <Stack data-testid="overview-welcome">
      <Title order={1} size="h2">
        Welcome, {name}
      </Title>
      <Text>Your role does not include the analytics shown here. You can open:</Text>
      <List>
        {links.map((l) => (
          <List.Item key={l.to}>
            <Anchor component={Link} to={l.to}>
              {l.label}
            </Anchor>
          </List.Item>
        ))}
      </List>
      <PartnerHealthCard />
    </Stack>
  );
}

export default function Overview() {
  const whoami = useWhoami();
  if (whoami.isPending) return <Loading />;
  if (whoami.isError) return <ErrorAlert error={whoami.error} />;
  const { operator, permissions } = whoami.data;
  if (!permissions.includes('analytics:view'))
    return <Welcome name={operator.name || operator.email} permissions={permissions} />;
  return <Dashboard timezone={operator.timezone} />;
}
