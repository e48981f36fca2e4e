// What the report screens ask (target p95 ≤ 150 ms): the Overview as it loads (its KPIs, chart,
// top lists, partner health and first-run checklist, sent without dates or time zone: the API's
// defaults, the last 30 days in the operator's zone), the Analytics screen's leads report at one
// and two levels over 30 and 90 days, its partner performance (with the provider × partner grid
// the screen always asks for), CRG deals and CSV downloads, and Cap usage.
import {
  crg,
  csv,
  daysAgo,
  groups,
  list,
  partnerPerformance,
  range,
  REPORT_MS,
  today,
  todayUtc,
  totals,
  type Fixture,
  type Query,
} from './common.js';

const report = (name: string, path: (f: Fixture) => string, describe: Query['describe'] = groups): Query => ({
  kind: 'analytics',
  name,
  targetMs: REPORT_MS,
  path,
  describe,
});
const analytics = (name: string, qs: (f: Fixture) => string, describe: Query['describe'] = groups) =>
  report(name, (f) => `/api/analytics/${qs(f)}`, describe);

// ---- the eight reports recorded in bench/RESULTS.md (A13–A20): names and order kept ----

export const RECORDED_REPORTS: Query[] = [
  analytics('Summary, last 30 days', () => `summary?${range(30)}`, totals),
  analytics('Report by day, last 30 days', () => `report?group_by=day&${range(30)}`),
  analytics('Report by partner, last 30 days', () => `report?group_by=partner&${range(30)}`),
  analytics('Report by day then country, last 90 days', () => `report?group_by=day&then_by=country&${range(90)}`),
  analytics(
    'Report by campaign then country, last 30 days',
    () => `report?group_by=campaign&then_by=country&${range(30)}`,
  ),
  analytics('Report by partner, FTD date, last 30 days', () => `report?group_by=partner&date_type=ftd&${range(30)}`),
  analytics(
    'Summary, one partner and country, last 30 days',
    (f) => `summary?partner_id=${f.partnerId}&country=DE&${range(30)}`,
    totals,
  ),
  analytics(
    'Report by day in Asia/Kolkata (UTC+5:30), last 30 days',
    () => `report?group_by=day&date_from=${daysAgo(29)}&date_to=${today}&timezone=Asia/Kolkata`,
  ),
];

// ---- the rest ----

const LABELS = {
  day: 'day',
  week: 'week',
  month: 'month',
  partner: 'partner',
  traffic_provider: 'traffic provider',
  campaign: 'campaign',
  flow: 'flow',
  country: 'country',
} as const;
type Dimension = keyof typeof LABELS;
const DIMENSIONS = Object.keys(LABELS) as Dimension[];

const grouped = (by: Dimension, then: Dimension | null, days: 30 | 90) =>
  analytics(
    `Report by ${LABELS[by]}${then ? ` then ${LABELS[then]}` : ''}, last ${days} days`,
    () => `report?group_by=${by}${then ? `&then_by=${then}` : ''}&${range(days)}`,
  );
const recorded = new Set(RECORDED_REPORTS.map((q) => q.name));
const unlessRecorded = (qs: Query[]) => qs.filter((q) => !recorded.has(q.name));

/** Two-level reports the Analytics screen is used for (its "then by" picker). */
const PAIRS: [Dimension, Dimension][] = [
  ['day', 'country'],
  ['campaign', 'country'],
  ['partner', 'country'],
  ['traffic_provider', 'campaign'],
  ['week', 'partner'],
  ['month', 'traffic_provider'],
  ['country', 'partner'],
  ['flow', 'partner'],
];

const perf = (name: string, qs: string) =>
  analytics(`Partner performance${name}`, () => `partners?${qs}`, partnerPerformance);

export const REPORTS: Query[] = [
  // The Overview, request for request (Overview.tsx, Kpis.tsx, PartnerHealthCard.tsx, FirstRun.tsx).
  analytics('Overview: KPIs today', () => `summary?date_from=${todayUtc}&date_to=${todayUtc}`, totals),
  analytics('Overview: KPIs last 30 days', () => 'summary', totals),
  analytics('Overview: leads and FTDs per day', () => 'report?group_by=day'),
  analytics('Overview: top partners', () => 'report?group_by=partner'),
  analytics('Overview: top traffic providers', () => 'report?group_by=traffic_provider'),
  report('Overview: partner health', () => '/api/partners/health', list('partners')),
  ...(['traffic-providers', 'partners', 'flows', 'campaigns'] as const).map((what) =>
    report(`Overview: first-run checklist, any ${what.replace('-', ' ')}`, () => `/api/${what}?limit=1`, list(what)),
  ),
  // The Analytics screen's leads report.
  ...unlessRecorded(DIMENSIONS.flatMap((d) => [grouped(d, null, 30), grouped(d, null, 90)])),
  ...unlessRecorded(PAIRS.flatMap(([a, b]) => [grouped(a, b, 30), grouped(a, b, 90)])),
  analytics('Report by day, FTD date, last 90 days', () => `report?group_by=day&date_type=ftd&${range(90)}`),
  analytics(
    'Report by partner, DE and AT, last 30 days',
    () => `report?group_by=partner&country=DE&country=AT&${range(30)}`,
  ),
  report(
    'Report CSV by campaign then country, last 30 days',
    () => `/api/analytics/report/export?group_by=campaign&then_by=country&${range(30)}`,
    csv,
  ),
  // Partner performance: the screen always asks for the provider × partner grid.
  perf(' with provider grid, last 30 days', `then_by=traffic_provider&${range(30)}`),
  perf(' with provider grid, last 90 days', `then_by=traffic_provider&${range(90)}`),
  perf(' with provider grid, DE and AT, last 30 days', `then_by=traffic_provider&country=DE&country=AT&${range(30)}`),
  perf(', last 30 days', range(30)),
  perf(', last 90 days', range(90)),
  report(
    'Partner performance CSV with provider grid, last 30 days',
    () => `/api/analytics/partners/export?then_by=traffic_provider&${range(30)}`,
    csv,
  ),
  // CRG deals (the demo partners have no CRG: the report reads the range's delivered leads and finds none).
  analytics('CRG deals, last 30 days', () => `crg?${range(30)}`, crg),
  analytics('CRG deals, last 90 days', () => `crg?${range(90)}`, crg),
  report('Cap usage', () => '/api/routing/cap-usage', list('caps')),
];
