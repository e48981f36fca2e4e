// The queries the benchmark times: what the Leads table and the analytics screens ask most.
// Ranges are days in Europe/Berlin ending today, like an operator's dashboard.

export interface Fixture {
  partnerId: string;
  campaignId: string;
  providerId: string;
  email: string;
  lastName: string;
  leadId: string;
  /** next_cursor after two pages of the 30-day delivered search. */
  cursor: string;
}

export interface Query {
  kind: 'search' | 'analytics';
  name: string;
  targetMs: number;
  path(f: Fixture): string;
  describe(body: any): string;
}

const TZ = 'Europe/Berlin';
const today = new Intl.DateTimeFormat('en-CA', {
  timeZone: TZ,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
}).format(new Date());
const daysAgo = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
const range = (days: number) => `date_from=${daysAgo(days - 1)}&date_to=${today}&timezone=${encodeURIComponent(TZ)}`;
const enc = encodeURIComponent;

const rows = (body: { data: unknown[]; next_cursor: string | null }) =>
  `${body.data.length} rows${body.next_cursor ? ', more' : ''}`;
const groups = (body: { rows: { children?: unknown[] }[]; totals: { leads: number } }) => {
  const children = body.rows.reduce((n, r) => n + (r.children?.length ?? 0), 0);
  return `${body.rows.length} groups${children ? ` / ${children} sub-groups` : ''}, ${body.totals.leads.toLocaleString('en-US')} leads`;
};
const totals = (body: { totals: { leads: number; ftds: number } }) =>
  `${body.totals.leads.toLocaleString('en-US')} leads, ${body.totals.ftds.toLocaleString('en-US')} FTDs`;

const search = (name: string, qs: (f: Fixture) => string): Query => ({
  kind: 'search',
  name,
  targetMs: 50,
  path: (f) => `/api/leads/search?${qs(f)}`,
  describe: rows,
});

const analytics = (name: string, qs: (f: Fixture) => string, describe: Query['describe'] = groups): Query => ({
  kind: 'analytics',
  name,
  targetMs: 150,
  path: (f) => `/api/analytics/${qs(f)}`,
  describe,
});

export const QUERIES: Query[] = [
  search('Newest 50 leads, no filter', () => 'limit=50'),
  search('Last 30 days, delivered', () => `limit=50&status=delivered&${range(30)}`),
  search(
    'Last 30 days, delivered: page 3 (cursor)',
    (f) => `limit=50&status=delivered&${range(30)}&cursor=${enc(f.cursor)}`,
  ),
  search('Rejected or failed from DE/AT', () => 'limit=50&status=rejected&status=failed&country=DE&country=AT'),
  search('One partner, last 7 days', (f) => `limit=50&partner_id=${f.partnerId}&${range(7)}`),
  search('One campaign, all time', (f) => `limit=50&campaign_id=${f.campaignId}`),
  search('FTDs by FTD date, last 30 days', () => `limit=50&date_type=ftd&is_ftd=true&${range(30)}`),
  search('Exact email (q)', (f) => `limit=50&q=${enc(f.email)}`),
  search('Last name prefix (q)', (f) => `limit=50&q=${enc(f.lastName.slice(0, 5).toLowerCase())}`),
  search('Provider + sub_id1', (f) => `limit=50&traffic_provider_id=${f.providerId}&sub_id1=cr12`),
  search('Sale status, by delivery date', () => `limit=50&date_type=delivered&sale_status=${enc('No Answer')}`),
  search('Rare: failed leads from Norway', () => 'limit=50&status=failed&country=NO'),
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
