// The Leads table's searches (GET /api/leads/search, target p95 ≤ 50 ms): every filter of its
// query string alone, and combinations operators use. Each filter is measured on its first page
// without a count (an API script's request), with total=true (the dashboard's first page) and on
// page 3 through the keyset cursor (the dashboard's later pages: it sends total only without a
// cursor, and the route answers total: null with one). A filter whose matches cannot fill three
// pages (one lead by email, nothing tracked in the demo data…) has no page-3 variant.
import { enc, leadPage, list, count, range, daysAgo, SEARCH_MS, type Fixture, type Query } from './common.js';

type Qs = (f: Fixture) => string;
interface Filter {
  name: string;
  qs: Qs;
  /** false: fewer than three pages match (at 20,000 demo leads), so no page-3 variant. */
  deep?: false;
}

const search = (name: string, qs: Qs, { deep = false, total = false } = {}): Query => ({
  kind: 'search',
  name,
  targetMs: SEARCH_MS,
  deep,
  path: (f) => `/api/leads/search?${qs(f)}${total ? '&total=true' : ''}`,
  describe: leadPage(total),
});
const firstPage = (f: Filter) => search(f.name, f.qs);
const withTotal = (f: Filter) => search(`${f.name} + total`, f.qs, { total: true });
const page3 = (f: Filter) => search(`${f.name}: page 3 (cursor)`, f.qs, { deep: true });

// ---- the twelve searches recorded in bench/RESULTS.md (S1–S12): names and order kept ----

const DELIVERED_30: Filter = {
  name: 'Last 30 days, delivered',
  qs: () => `limit=50&status=delivered&${range(30)}`,
};
const RECORDED: Filter[] = [
  { name: 'Newest 50 leads, no filter', qs: () => 'limit=50' },
  DELIVERED_30,
  { name: 'Rejected or failed from DE/AT', qs: () => 'limit=50&status=rejected&status=failed&country=DE&country=AT' },
  { name: 'One partner, last 7 days', qs: (f) => `limit=50&partner_id=${f.partnerId}&${range(7)}` },
  { name: 'One campaign, all time', qs: (f) => `limit=50&campaign_id=${f.campaignId}` },
  { name: 'FTDs by FTD date, last 30 days', qs: () => `limit=50&date_type=ftd&is_ftd=true&${range(30)}` },
  { name: 'Exact email (q)', qs: (f) => `limit=50&q=${enc(f.email)}`, deep: false },
  // One lead's last name, five letters: at 20,000 leads it may match fewer than three pages.
  { name: 'Last name prefix (q)', qs: (f) => `limit=50&q=${enc(f.lastName.slice(0, 5).toLowerCase())}`, deep: false },
  { name: 'Provider + sub_id1', qs: (f) => `limit=50&traffic_provider_id=${f.providerId}&sub_id1=cr12` },
  { name: 'Sale status, by delivery date', qs: () => `limit=50&date_type=delivered&sale_status=${enc('No Answer')}` },
  // Few at 20,000 leads.
  { name: 'Rare: failed leads from Norway', qs: () => 'limit=50&status=failed&country=NO', deep: false },
];

export const RECORDED_SEARCHES: Query[] = RECORDED.flatMap((f) =>
  f === DELIVERED_30 ? [firstPage(f), page3(f)] : [firstPage(f)],
);

// ---- every other filter of SearchQuery alone, then combinations ----

const yesterday = daysAgo(1);
const ALONE: Filter[] = [
  { name: 'Last 7 days', qs: () => `limit=50&${range(7)}` },
  {
    name: 'One day (yesterday)',
    qs: () => `limit=50&date_from=${yesterday}&date_to=${yesterday}&timezone=Europe%2FBerlin`,
  },
  { name: 'By delivery date, last 7 days', qs: () => `limit=50&date_type=delivered&${range(7)}` },
  { name: 'By status update, last 7 days', qs: () => `limit=50&date_type=status_updated&${range(7)}` },
  { name: 'By FTD date, all time', qs: () => 'limit=50&date_type=ftd' },
  { name: 'Oldest first, last 30 days', qs: () => `limit=50&order=asc&${range(30)}` },
  { name: 'Status duplicate', qs: () => 'limit=50&status=duplicate' },
  // Only the last minutes' leads are new or pending, and no demo lead is held.
  { name: 'Status new, pending or held', qs: () => 'limit=50&status=new,pending,held', deep: false },
  { name: 'Country GB', qs: () => 'limit=50&country=GB' },
  { name: 'One partner, all time', qs: (f) => `limit=50&partner_id=${f.partnerId}` },
  { name: 'One traffic provider, all time', qs: (f) => `limit=50&traffic_provider_id=${f.providerId}` },
  { name: 'One flow, all time', qs: (f) => `limit=50&flow_id=${f.flowId}` },
  { name: 'FTD: yes', qs: () => 'limit=50&is_ftd=true' },
  { name: 'FTD: no', qs: () => 'limit=50&is_ftd=false' },
  // The demo data has no tracked autologin links and no re-injection jobs: these match nothing
  // (or everything) and walk the whole date index testing each lead.
  { name: 'Autologin opened', qs: () => 'limit=50&autologin_opened=true', deep: false },
  { name: 'Autologin tracked, not opened', qs: () => 'limit=50&autologin_opened=false', deep: false },
  { name: 'Re-injected', qs: () => 'limit=50&reinjected=true', deep: false },
  { name: 'Not re-injected', qs: () => 'limit=50&reinjected=false' },
  { name: 'Sale status, by registration date', qs: (f) => `limit=50&sale_status=${enc(f.saleStatus)}` },
  { name: 'Phone number (q)', qs: (f) => `limit=50&q=${enc(f.phone)}`, deep: false },
  { name: 'Lead id (q)', qs: (f) => `limit=50&q=${f.leadId}`, deep: false },
  { name: 'First and last name (q)', qs: (f) => `limit=50&q=${enc(`${f.firstName} ${f.lastName}`)}`, deep: false },
  { name: 'Common last name prefix (q)', qs: (f) => `limit=50&q=${enc(f.commonLastName.slice(0, 4))}` },
  { name: '200 lead ids (id)', qs: (f) => `limit=50&id=${f.leadIds.join(',')}` },
  { name: 'One fraud flag (flag)', qs: (f) => `limit=50&flag=${f.flag}` },
  { name: 'Flagged', qs: () => 'limit=50&flagged=true' },
  { name: 'Not flagged', qs: () => 'limit=50&flagged=false' },
  { name: 'Quality score at most (max_score)', qs: (f) => `limit=50&max_score=${f.maxScore}` },
  { name: 'sub_id1', qs: (f) => `limit=50&sub_id1=${enc(f.subIds[0])}` },
  { name: 'sub_id2', qs: (f) => `limit=50&sub_id2=${enc(f.subIds[1])}` },
  // A click id: one lead.
  { name: 'sub_id3 (a click id)', qs: (f) => `limit=50&sub_id3=${enc(f.subIds[2])}`, deep: false },
  // Its commonest value has a few dozen leads at 20,000.
  { name: 'sub_id4', qs: (f) => `limit=50&sub_id4=${enc(f.subIds[3])}`, deep: false },
  { name: 'sub_id5', qs: (f) => `limit=50&sub_id5=${enc(f.subIds[4])}` },
];

const COMBINED: Filter[] = [
  { name: 'Delivered from DE, last 30 days', qs: () => `limit=50&status=delivered&country=DE&${range(30)}` },
  {
    name: "One partner's FTDs, last 30 days",
    qs: (f) => `limit=50&partner_id=${f.partnerId}&is_ftd=true&${range(30)}`,
    deep: false,
  },
  {
    name: 'Provider + campaign + sub_id2, last 7 days',
    qs: (f) =>
      `limit=50&traffic_provider_id=${f.providerId}&campaign_id=${f.campaignId}&sub_id2=${enc(f.subIds[1])}&${range(7)}`,
    deep: false,
  },
  {
    name: 'Flagged from one provider, last 7 days',
    qs: (f) => `limit=50&flagged=true&traffic_provider_id=${f.providerId}&${range(7)}`,
    deep: false,
  },
  {
    name: 'Low score and delivered, last 30 days',
    qs: (f) => `limit=50&max_score=${f.maxScore}&status=delivered&${range(30)}`,
  },
  {
    name: "One partner's sale status, by status update, last 7 days",
    qs: (f) =>
      `limit=50&partner_id=${f.partnerId}&sale_status=${enc(f.saleStatus)}&date_type=status_updated&${range(7)}`,
    deep: false,
  },
  {
    name: 'Rejected or failed in one flow, last 30 days',
    qs: (f) => `limit=50&flow_id=${f.flowId}&status=rejected,failed&${range(30)}`,
  },
  {
    name: 'Common last name prefix, last 30 days (q)',
    qs: (f) => `limit=50&q=${enc(f.commonLastName.slice(0, 4))}&${range(30)}`,
  },
  {
    name: 'One partner by delivery date, oldest first, last 7 days',
    qs: (f) => `limit=50&partner_id=${f.partnerId}&date_type=delivered&order=asc&${range(7)}`,
  },
  {
    name: 'Rejected and not re-injected, last 30 days',
    qs: () => `limit=50&status=rejected&reinjected=false&${range(30)}`,
  },
  {
    name: "One provider's FTDs by FTD date, last 90 days",
    qs: (f) => `limit=50&traffic_provider_id=${f.providerId}&date_type=ftd&is_ftd=true&${range(90)}`,
  },
  {
    name: "One partner's unopened autologin links, last 30 days",
    qs: (f) => `limit=50&partner_id=${f.partnerId}&status=delivered&autologin_opened=false&${range(30)}`,
    deep: false,
  },
  {
    name: 'Flagged with one flag, delivered from DE/AT, last 30 days',
    qs: (f) => `limit=50&flag=${f.flag}&status=delivered&country=DE,AT&${range(30)}`,
    deep: false,
  },
];

export const SEARCHES: Query[] = [
  // The recorded filters' other variants (S3 is already the page 3 of S2).
  ...RECORDED.flatMap((f) => [withTotal(f), ...(f.deep === false || f === DELIVERED_30 ? [] : [page3(f)])]),
  ...[...ALONE, ...COMBINED].flatMap((f) => [firstPage(f), withTotal(f), ...(f.deep === false ? [] : [page3(f)])]),
  // What else the Leads screen sends: its sale-status picker, and "Count exactly" past 10,000.
  {
    kind: 'search',
    name: 'Sale statuses for the filter picker',
    targetMs: SEARCH_MS,
    path: () => '/api/leads/sale-statuses',
    describe: list('sale statuses'),
  },
  {
    kind: 'search',
    name: 'Count exactly: last 30 days, delivered',
    targetMs: SEARCH_MS,
    path: () => `/api/leads/count?status=delivered&${range(30)}`,
    describe: count,
  },
];
