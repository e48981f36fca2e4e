import { Paper, SimpleGrid, Skeleton, Stack, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { api, must } from '../../api/client';
import { ErrorAlert } from '../../ui/EditorPage';
import { formatCount, formatMoney, formatRate, type Summary } from '../analytics/report';

const KPIS: { key: keyof Summary['totals']; label: string; format: (s: Summary) => string }[] = [
  { key: 'leads', label: 'Leads', format: (s) => formatCount(s.totals.leads) },
  { key: 'delivered', label: 'Delivered', format: (s) => formatCount(s.totals.delivered) },
  { key: 'ftds', label: 'FTDs', format: (s) => formatCount(s.totals.ftds) },
  { key: 'conversion_rate', label: 'Conversion', format: (s) => formatRate(s.totals.conversion_rate) },
  { key: 'revenue', label: 'Revenue', format: (s) => formatMoney(s.totals.revenue, s.currency) },
  { key: 'cost', label: 'Cost', format: (s) => formatMoney(s.totals.cost, s.currency) },
  { key: 'profit', label: 'Profit', format: (s) => formatMoney(s.totals.profit, s.currency) },
];

/** One row of KPI cards for a period: `id` names it in test ids (kpi-<id>-<measure>). */
export function KpiRow({
  id,
  title,
  query,
  live,
}: {
  id: string;
  title: string;
  query: { date_from?: string; date_to?: string };
  live?: { refetchInterval: number | false };
}) {
  const summary = useQuery({
    queryKey: ['analytics-summary', query],
    queryFn: async () => must(await api.GET('/api/analytics/summary', { params: { query } })),
    ...live,
  });
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        {title}
      </Title>
      {summary.isError ? (
        <ErrorAlert error={summary.error} />
      ) : (
        <SimpleGrid cols={{ base: 2, sm: 4, lg: 7 }} spacing="sm">
          {KPIS.map((k) => (
            <Paper key={k.key} withBorder p="sm" radius="md">
              <Text size="xs" c="dimmed" tt="uppercase" fw={700}>
                {k.label}
              </Text>
              {summary.data ? (
                <Text
                  size="lg"
                  fw={700}
                  data-testid={`kpi-${id}-${k.key}`}
                  c={k.key === 'profit' && summary.data.totals.profit < 0 ? 'red' : undefined}
                >
                  {k.format(summary.data)}
                </Text>
              ) : (
                <Skeleton h={28} mt={2} />
              )}
            </Paper>
          ))}
        </SimpleGrid>
      )}
    </Stack>
  );
}
