// The analytics report's shapes, its URL form and the formatting of its measures, shared by the
// Analytics screen and the Overview. The report's choices live in the URL query string under the
// API's own parameter names, so a reload or a bookmark shows the same report.
import type { paths } from '../../api/schema';

export type ReportQuery = NonNullable<paths['/api/analytics/report']['get']['parameters']['query']>;
export type Report = paths['/api/analytics/report']['get']['responses'][200]['content']['application/json'];
export type Summary = paths['/api/analytics/summary']['get']['responses'][200]['content']['application/json'];
export type Row = Report['rows'][number];
export type Measures = Report['totals'];
export type Dimension = NonNullable<ReportQuery['group_by']>;
export type DateType = NonNullable<ReportQuery['date_type']>;

export const DIMENSIONS: { value: Dimension; label: string }[] = [
  { value: 'day', label: 'Day' },
  { value: 'week', label: 'Week' },
  { value: 'month', label: 'Month' },
  { value: 'partner', label: 'Partner' },
  { value: 'traffic_provider', label: 'Traffic provider' },
  { value: 'campaign', label: 'Campaign' },
  { value: 'flow', label: 'Flow' },
  { value: 'country', label: 'Country' },
];
export const isTime = (d: Dimension) => d === 'day' || d === 'week' || d === 'month';
export const dimensionLabel = (d: Dimension) => DIMENSIONS.find((x) => x.value === d)?.label ?? d;

export const DATE_TYPES: { value: DateType; label: string }[] = [
  { value: 'registration', label: 'Registration date' },
  { value: 'ftd', label: 'FTD date' },
];

/** The report's query as the URL holds it. */
export type ReportForm = Pick<
  ReportQuery,
  'group_by' | 'then_by' | 'date_from' | 'date_to' | 'date_type' | 'country' | 'timezone'
>;

/**
 * URL → API query. Values are passed on as typed (an unknown grouping included) so that the
 * API, not the screen, says what is wrong with a hand-edited or outdated link.
 */
export function parseForm(params: URLSearchParams): ReportForm {
  const out: ReportForm = { group_by: (params.get('group_by') || 'day') as Dimension };
  const thenBy = params.get('then_by');
  if (thenBy) out.then_by = thenBy as Dimension;
  for (const key of ['date_from', 'date_to', 'timezone'] as const) {
    const v = params.get(key)?.trim();
    if (v) out[key] = v;
  }
  const dateType = params.get('date_type');
  if (dateType) out.date_type = dateType as DateType;
  const country = params
    .getAll('country')
    .flatMap((v) => v.split(','))
    .map((c) => c.trim().toUpperCase())
    .filter(Boolean);
  if (country.length) out.country = country;
  return out;
}

/** API query → URL (the inverse of parseForm; defaults are left out to keep links short). */
export function formToParams(f: ReportForm): URLSearchParams {
  const p = new URLSearchParams();
  if (f.group_by && f.group_by !== 'day') p.set('group_by', f.group_by);
  if (f.then_by) p.set('then_by', f.then_by);
  if (f.date_from) p.set('date_from', f.date_from);
  if (f.date_to) p.set('date_to', f.date_to);
  if (f.timezone) p.set('timezone', f.timezone);
  if (f.date_type && f.date_type !== 'registration') p.set('date_type', f.date_type);
  for (const c of f.country ?? []) p.append('country', c);
  return p;
}

// ---- date presets ----

export type Preset = 'today' | 'yesterday' | 'last7' | 'last30' | 'this_month' | 'last_month';
export const PRESETS: { value: Preset; label: string }[] = [
  { value: 'today', label: 'Today' },
  { value: 'yesterday', label: 'Yesterday' },
  { value: 'last7', label: 'Last 7 days' },
  { value: 'last30', label: 'Last 30 days' },
  { value: 'this_month', label: 'This month' },
  { value: 'last_month', label: 'Last month' },
];

export { dayIn } from '../../ui/clock';

/** A preset's first and last day, both inclusive, from today's date in the operator's zone. */
export function presetRange(preset: Preset, today: string): { date_from: string; date_to: string } {
  const [y, m, d] = today.split('-').map(Number);
  const day = (yy: number, mm: number, dd: number) => new Date(Date.UTC(yy, mm - 1, dd)).toISOString().slice(0, 10);
  switch (preset) {
    case 'today':
      return { date_from: today, date_to: today };
    case 'yesterday':
      return { date_from: day(y, m, d - 1), date_to: day(y, m, d - 1) };
    case 'last7':
      return { date_from: day(y, m, d - 6), date_to: today };
    case 'last30':
      return { date_from: day(y, m, d - 29), date_to: today };
    case 'this_month':
      return { date_from: day(y, m, 1), date_to: today };
    case 'last_month':
      return { date_from: day(y, m - 1, 1), date_to: day(y, m, 0) };
  }
}

// ---- measures ----

const counts = new Intl.NumberFormat();
const percent = new Intl.NumberFormat(undefined, {
  style: 'percent',
  minimumFractionDigits: 1,
  maximumFractionDigits: 1,
});

export const formatCount = (n: number) => counts.format(n);
/** conversion_rate (ftds / delivered) and flagged_rate (flagged / leads) are ratios; operators read them as percentages. */
export const formatRate = (r: number) => percent.format(r);
export function formatMoney(n: number, currency: string) {
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(n);
  } catch {
    // A currency code Intl does not know is still shown, after the amount.
    return `${n.toFixed(2)} ${currency}`;
  }
}

export interface MeasureColumn {
  key: keyof Measures;
  label: string;
  format: (m: Measures, currency: string) => string;
}

const count = (key: keyof Measures, label: string): MeasureColumn => ({
  key,
  label,
  format: (m) => formatCount(m[key]),
});
const money = (key: keyof Measures, label: string): MeasureColumn => ({
  key,
  label,
  format: (m, c) => formatMoney(m[key], c),
});

export const MEASURES: MeasureColumn[] = [
  count('leads', 'Leads'),
  count('delivered', 'Delivered'),
  count('rejected', 'Rejected'),
  count('duplicates', 'Duplicates'),
  count('failed', 'Failed'),
  // Leads with any fraud flag, with their share of the leads (flagged_rate).
  {
    key: 'flagged',
    label: 'Flagged',
    format: (m) => (m.flagged ? `${formatCount(m.flagged)} (${formatRate(m.flagged_rate)})` : formatCount(0)),
  },
  count('ftds', 'FTDs'),
  { key: 'conversion_rate', label: 'Conversion', format: (m) => formatRate(m.conversion_rate) },
  money('revenue', 'Revenue'),
  money('cost', 'Cost'),
  money('profit', 'Profit'),
];

// ---- chart ----

export interface ChartSeries {
  name: string;
  label: string;
  color: string;
  yAxisId?: string;
}

export type ChartMeasure = 'leads' | 'delivered' | 'ftds';
export const CHART_MEASURES: { value: ChartMeasure; label: string }[] = [
  { value: 'leads', label: 'Leads' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'ftds', label: 'FTDs' },
];

/** A period × entity chart draws one line per entity: the biggest ones, the rest as "Others". */
const MAX_LINES = 6;
const LINE_COLORS = ['blue.6', 'teal.6', 'orange.6', 'grape.6', 'red.6', 'lime.7', 'gray.6'];

/**
 * Each period's inner groups as lines: the MAX_LINES groups biggest over the whole range, and the
 * rest summed as "Others", so every period's lines add up to its total.
 */
export function breakdown(rows: Row[], measure: ChartMeasure) {
  const totals = new Map<string, { label: string; total: number }>();
  for (const r of rows) {
    for (const c of r.children ?? []) {
      const k = c.key ?? '';
      const t = totals.get(k) ?? { label: c.label, total: 0 };
      t.total += c[measure];
      totals.set(k, t);
    }
  }
  const ranked = [...totals].sort((a, b) => b[1].total - a[1].total);
  const shown = ranked.length > MAX_LINES + 1 ? ranked.slice(0, MAX_LINES) : ranked;
  const others = ranked.length > shown.length;
  const series: ChartSeries[] = shown.map(([, t], i) => ({ name: `g${i}`, label: t.label, color: LINE_COLORS[i] }));
  if (others)
    series.push({ name: 'others', label: `Others (${ranked.length - shown.length})`, color: LINE_COLORS[MAX_LINES] });
  const data = rows.map((r) => {
    const point: Record<string, string | number> = { label: r.label };
    shown.forEach((_, i) => (point[`g${i}`] = 0));
    if (others) point.others = 0;
    for (const c of r.children ?? []) {
      const i = shown.findIndex(([k]) => k === (c.key ?? ''));
      const name = i >= 0 ? `g${i}` : 'others';
      point[name] = (point[name] as number) + c[measure];
    }
    return point;
  });
  return { data, series };
}
