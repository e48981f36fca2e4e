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
export type ReportForm = Pick<ReportQuery, 'group_by' | 'then_by' | 'date_from' | 'date_to' | 'date_type' | 'country'>;

/**
 * URL → API query. Values are passed on as typed (an unknown grouping included) so that the
 * API, not the screen, says what is wrong with a hand-edited or outdated link.
 */
export function parseForm(params: URLSearchParams): ReportForm {
  const out: ReportForm = { group_by: (params.get('group_by') || 'day') as Dimension };
  const thenBy = params.get('then_by');
  if (thenBy) out.then_by = thenBy as Dimension;
  for (const key of ['date_from', 'date_to'] as const) {
    const v = params.get(key)?.trim();
    if (v) out[key] = v;
  }
  const dateType = params.get('date_type');
  if (dateType) out.date_type = dateType as DateType;
  const country = params.getAll('country').flatMap((v) => v.split(',')).map((c) => c.trim().toUpperCase()).filter(Boolean);
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
  if (f.date_type && f.date_type !== 'registration') p.set('date_type', f.date_type);
  for (const c of f.country ?? []) p.append('country', c);
  return p;
}

// ---- measures ----

const counts = new Intl.NumberFormat();
const percent = new Intl.NumberFormat(undefined, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 });

export const formatCount = (n: number) => counts.format(n);
/** conversion_rate is a ratio (ftds / delivered); operators read it as a percentage. */
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

const count = (key: keyof Measures, label: string): MeasureColumn => ({ key, label, format: (m) => formatCount(m[key]) });
const money = (key: keyof Measures, label: string): MeasureColumn => ({ key, label, format: (m, c) => formatMoney(m[key], c) });

export const MEASURES: MeasureColumn[] = [
  count('leads', 'Leads'),
  count('delivered', 'Delivered'),
  count('rejected', 'Rejected'),
  count('duplicates', 'Duplicates'),
  count('failed', 'Failed'),
  count('ftds', 'FTDs'),
  { key: 'conversion_rate', label: 'Conversion', format: (m) => formatRate(m.conversion_rate) },
  money('revenue', 'Revenue'),
  money('cost', 'Cost'),
  money('profit', 'Profit'),
];
