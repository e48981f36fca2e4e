import '@mantine/charts/styles.css';
import { BarChart, LineChart } from '@mantine/charts';
import { Text } from '@mantine/core';
import { isTime, type Dimension, type Row } from './report';

// Counts only: amounts (revenue, cost) would flatten them on a shared axis; the table has those.
const SERIES = [
  { name: 'leads', label: 'Leads', color: 'blue.6' },
  { name: 'delivered', label: 'Delivered', color: 'teal.6' },
  { name: 'ftds', label: 'FTDs', color: 'orange.6' },
];
/** Entity groupings can have hundreds of rows (countries); the chart shows the biggest. */
const MAX_BARS = 15;

/** Periods as a line over time; entities (partners, countries…) as bars, most leads first. */
export function ReportChart({ rows, groupBy, series = SERIES, h = 300 }: { rows: Row[]; groupBy: Dimension; series?: typeof SERIES; h?: number }) {
  const data = rows.map((r) => ({ label: r.label, leads: r.leads, delivered: r.delivered, ftds: r.ftds }));
  if (isTime(groupBy)) {
    return <LineChart h={h} data={data} dataKey="label" series={series} curveType="monotone" withLegend withDots={data.length <= 31} data-testid="report-chart" />;
  }
  return (
    <>
      {/* Every bar named: slanted labels, as recharts would otherwise skip the ones that collide. */}
      <BarChart
        h={h + 50}
        data={data.slice(0, MAX_BARS)}
        dataKey="label"
        series={series}
        withLegend
        xAxisProps={{ interval: 0, angle: -30, textAnchor: 'end', height: 80 }}
        data-testid="report-chart"
      />
      {data.length > MAX_BARS && (
        <Text size="xs" c="dimmed" mt="xs">
          The {MAX_BARS} groups with the most leads of {data.length}; the table lists all.
        </Text>
      )}
    </>
  );
}

export const LEADS_AND_FTDS = SERIES.filter((s) => s.name !== 'delivered');
