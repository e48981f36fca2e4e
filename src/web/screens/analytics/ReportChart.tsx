import '@mantine/charts/styles.css';
import { BarChart, LineChart } from '@mantine/charts';
import { SegmentedControl, Stack, Text } from '@mantine/core';
import { useState } from 'react';
import {
  breakdown,
  CHART_MEASURES,
  dimensionLabel,
  isTime,
  type ChartMeasure,
  type ChartSeries,
  type Dimension,
  type Row,
} from './report';

// Counts only: amounts (revenue, cost) would flatten them; the table has those. FTDs are a few
// percent of leads, so they get their own axis on the right instead of lying flat at zero.
const SERIES: ChartSeries[] = [
  { name: 'leads', label: 'Leads', color: 'blue.6' },
  { name: 'delivered', label: 'Delivered', color: 'teal.6' },
  { name: 'ftds', label: 'FTDs', color: 'orange.6', yAxisId: 'right' },
];
export const LEADS_AND_FTDS = SERIES.filter((s) => s.name !== 'delivered');

/** Entity groupings can have hundreds of rows (countries); the chart shows the biggest. */
const MAX_BARS = 15;

function ByGroup({ rows, groupBy, thenBy, h }: { rows: Row[]; groupBy: Dimension; thenBy: Dimension; h: number }) {
  const [measure, setMeasure] = useState<ChartMeasure>('leads');
  const { data, series } = breakdown(rows, measure);
  return (
    <Stack gap="xs">
      <SegmentedControl
        size="xs"
        w="fit-content"
        data={CHART_MEASURES}
        value={measure}
        onChange={(v) => setMeasure(v as ChartMeasure)}
        aria-label="Chart measure"
        data-testid="chart-measure"
      />
      <LineChart
        h={h}
        data={data}
        dataKey="label"
        series={series}
        curveType="monotone"
        withLegend
        withDots={data.length <= 31}
        yAxisLabel={`${CHART_MEASURES.find((m) => m.value === measure)!.label} by ${dimensionLabel(thenBy).toLowerCase()}`}
        data-testid="report-chart"
        data-breakdown={thenBy}
        aria-label={`${CHART_MEASURES.find((m) => m.value === measure)!.label} per ${dimensionLabel(groupBy).toLowerCase()}, by ${dimensionLabel(thenBy).toLowerCase()}`}
      />
    </Stack>
  );
}

/**
 * Periods as a line over time; entities (partners, countries…) as bars, most leads first; a
 * period grouped by an entity (day × country) as one line per entity.
 */
export function ReportChart({
  rows,
  groupBy,
  thenBy,
  series = SERIES,
  h = 300,
}: {
  rows: Row[];
  groupBy: Dimension;
  thenBy?: Dimension | null;
  series?: ChartSeries[];
  h?: number;
}) {
  if (isTime(groupBy) && thenBy && !isTime(thenBy))
    return <ByGroup rows={rows} groupBy={groupBy} thenBy={thenBy} h={h} />;
  const data = rows.map((r) => ({ label: r.label, leads: r.leads, delivered: r.delivered, ftds: r.ftds }));
  const axes = {
    withRightYAxis: series.some((s) => s.yAxisId === 'right'),
    yAxisLabel: 'Leads',
    rightYAxisLabel: 'FTDs',
  };
  if (isTime(groupBy)) {
    return (
      <LineChart
        h={h}
        data={data}
        dataKey="label"
        series={series}
        curveType="monotone"
        withLegend
        withDots={data.length <= 31}
        {...axes}
        data-testid="report-chart"
      />
    );
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
        {...axes}
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
