// An analytics report as CSV, detail rows only so that a spreadsheet's SUM over any count or money
// column is the report's total: one line per group, or with two levels one line per inner group
// (each carrying both groups' columns) and no subtotal lines; no Total line. The grouping columns
// first (label and key), then every measure, then the currency.
import { csvCell } from '../../http/csv.js';
import type { report } from './service.js';

type ReportT = Awaited<ReturnType<typeof report>>;
type Measures = ReportT['totals'];

const MEASURE_COLUMNS: (keyof Measures)[] = [
  'leads',
  'delivered',
  'rejected',
  'duplicates',
  'failed',
  'ftds',
  'conversion_rate',
  'flagged',
  'flagged_rate',
  'revenue',
  'cost',
  'profit',
];

export function reportCsv(r: ReportT): string {
  const levels = r.then_by ? [r.group_by, r.then_by] : [r.group_by];
  const header = [...levels.flatMap((d) => [d, `${d}_key`]), ...MEASURE_COLUMNS, 'currency'];
  const line = (groups: (string | null)[], m: Measures) =>
    [...groups, ...MEASURE_COLUMNS.map((k) => m[k]), r.currency].map(csvCell).join(',') + '\r\n';
  let out = header.join(',') + '\r\n';
  for (const row of r.rows) {
    if (!r.then_by) out += line([row.label, row.key], row);
    for (const child of row.children ?? []) out += line([row.label, row.key, child.label, child.key], child);
  }
  return out;
}

/** report-country-partner-2026-10-27-to-2026-11-25.csv: what and which days, in the report's zone. */
export function reportFileName(r: ReportT): string {
  const day = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: r.timezone }).format(new Date(ms));
  const levels = r.then_by ? `${r.group_by}-${r.then_by}` : r.group_by;
  return `report-${levels}-${day(Date.parse(r.from))}-to-${day(Date.parse(r.to) - 1)}.csv`;
}
