// What the benchmark's queries share: the values taken from the data (Fixture), a query's shape,
// the date ranges (days in Europe/Berlin ending today, like an operator's dashboard) and the
// checks of each answer's shape.

export interface Fixture {
  partnerId: string;
  campaignId: string;
  providerId: string;
  flowId: string;
  /** One lead registered about 20 days ago: its id and contacts. */
  leadId: string;
  email: string;
  phone: string;
  firstName: string;
  lastName: string;
  /** The commonest last name (a name prefix with many matches, so it has deep pages). */
  commonLastName: string;
  /** 200 lead ids (the most the id filter takes), registered about 20 days ago. */
  leadIds: string[];
  /** A value of sub_id1…sub_id5 each: the commonest, but sub_id3's (a click id) is one lead's. */
  subIds: [string, string, string, string, string];
  /** The commonest sale status other than New. */
  saleStatus: string;
  /** The fraud flag most leads carry. */
  flag: string;
  /** The commonest quality score below 100: max_score= keeps the flagged leads at or under it. */
  maxScore: number;
}

export interface Query {
  /** search: the Leads screen (target p95 ≤ 50 ms); analytics: the Overview, Analytics and Cap usage screens (≤ 150 ms). */
  kind: 'search' | 'analytics';
  name: string;
  targetMs: number;
  /** The request's path; for a deep query, its first page's (run.ts adds the cursor). */
  path(f: Fixture): string;
  /** Measure page DEEP_PAGES + 1 (page 3): run.ts follows next_cursor from the first page of path() first. */
  deep?: boolean;
  /** What the answer holds, for the table; throws when the body is not the shape the route answers. */
  describe(body: any): string;
}

/** The pages a deep query skips before the one measured. */
export const DEEP_PAGES = 2;
export const SEARCH_MS = 50;
export const REPORT_MS = 150;

const TZ = 'Europe/Berlin';
const dayIn = (timeZone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
export const today = dayIn(TZ);
/** Today in UTC: the bench's owner account's own time zone, which the Overview's requests leave implicit. */
export const todayUtc = dayIn('UTC');
export const daysAgo = (n: number) =>
  new Date(Date.parse(`${today}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
export const range = (days: number) =>
  `date_from=${daysAgo(days - 1)}&date_to=${today}&timezone=${encodeURIComponent(TZ)}`;
export const enc = encodeURIComponent;

function check(ok: unknown, what: string): asserts ok {
  if (!ok) throw new Error(`unexpected answer: ${what}`);
}
const n = (x: number) => x.toLocaleString('en-US');

/** A Leads page; `total`: whether the answer must carry the bounded count (first page with total=true). */
export const leadPage =
  (total: boolean) =>
  (body: { data: unknown[]; next_cursor: string | null; total: { count: number; exact: boolean } | null }) => {
    check(Array.isArray(body.data), 'data is not an array');
    check(body.next_cursor === null || typeof body.next_cursor === 'string', 'next_cursor');
    const rows = `${body.data.length} rows${body.next_cursor ? ', more' : ''}`;
    if (!total) {
      check(body.total === null, 'total is not null');
      return rows;
    }
    check(body.total && typeof body.total.count === 'number', 'total missing');
    return `${rows}; total ${n(body.total.count)}${body.total.exact ? '' : '+'}`;
  };

export const groups = (body: { rows: { children?: unknown[] }[]; totals: { leads: number } }) => {
  check(Array.isArray(body.rows) && typeof body.totals?.leads === 'number', 'rows or totals.leads');
  const children = body.rows.reduce((s, r) => s + (r.children?.length ?? 0), 0);
  return `${body.rows.length} groups${children ? ` / ${children} sub-groups` : ''}, ${n(body.totals.leads)} leads`;
};

export const totals = (body: { totals: { leads: number; ftds: number } }) => {
  check(typeof body.totals?.leads === 'number' && typeof body.totals.ftds === 'number', 'totals');
  return `${n(body.totals.leads)} leads, ${n(body.totals.ftds)} FTDs`;
};

export const partnerPerformance = (body: { rows: { children?: unknown[] }[]; totals: { attempts: number } }) => {
  check(Array.isArray(body.rows) && typeof body.totals?.attempts === 'number', 'rows or totals.attempts');
  const children = body.rows.reduce((s, r) => s + (r.children?.length ?? 0), 0);
  return `${body.rows.length} partners${children ? ` / ${children} sub-groups` : ''}, ${n(body.totals.attempts)} attempts`;
};

export const crg = (body: { rows: { leads: number }[]; currency: string }) => {
  check(Array.isArray(body.rows) && typeof body.currency === 'string', 'rows or currency');
  return `${body.rows.length} partner periods, ${n(body.rows.reduce((s, r) => s + r.leads, 0))} leads`;
};

/** A list answer ({ data: [...] }): cap usage, partner health, the record lists, sale statuses. */
export const list =
  (what: string) =>
  (body: { data: unknown[] }): string => {
    check(Array.isArray(body.data), 'data is not an array');
    return `${body.data.length} ${what}`;
  };

export const count = (body: { count: number }) => {
  check(typeof body.count === 'number', 'count');
  return `${n(body.count)} leads`;
};

/** A CSV download (header row, CRLF line ends): its rows, header left out. */
export const csv = (body: string) => {
  check(typeof body === 'string' && body.includes('\r\n'), 'not CSV');
  return `CSV, ${n(body.split('\r\n').filter(Boolean).length - 1)} rows`;
};
