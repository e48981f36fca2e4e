// The Leads table's filters live in the URL query string (so a reload, a bookmark or a shared
// link shows the same rows) under the API's own parameter names, and its column choice lives in
// localStorage (a per-browser preference, not part of what is being looked at).
import type { paths } from '../../api/schema';
import type { Clock } from '../../ui/clock';
import { isFlag, scoreText } from '../quality/flags';

export type SearchQuery = NonNullable<paths['/api/leads/search']['get']['parameters']['query']>;
export type FilterQuery = Omit<SearchQuery, 'cursor' | 'limit'>;
export type Lead = paths['/api/leads/search']['get']['responses'][200]['content']['application/json']['data'][number];
export type LeadDetail = paths['/api/leads/{id}']['get']['responses'][200]['content']['application/json'];
export type Attempt = LeadDetail['attempts'][number];
export type DateType = NonNullable<FilterQuery['date_type']>;

export const STATUSES = ['new', 'pending', 'held', 'delivered', 'rejected', 'duplicate', 'failed'] as const;
export const DATE_TYPES: { value: DateType; label: string }[] = [
  { value: 'registration', label: 'Registration' },
  { value: 'delivered', label: 'Delivered' },
  { value: 'ftd', label: 'FTD' },
  { value: 'status_updated', label: 'Status updated' },
];

/** Single-valued text filters, by API parameter name. */
export const TEXT_KEYS = [
  'date_from',
  'date_to',
  'partner_id',
  'traffic_provider_id',
  'campaign_id',
  'flow_id',
  'sale_status',
  'q',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
] as const;
type TextKey = (typeof TEXT_KEYS)[number];

/** The URL's query string → the API query. Unknown or empty parameters are dropped. */
export function parseFilters(params: URLSearchParams): FilterQuery {
  const out: FilterQuery = {};
  const dateType = params.get('date_type');
  if (DATE_TYPES.some((d) => d.value === dateType)) out.date_type = dateType as DateType;
  for (const key of TEXT_KEYS) {
    const v = params.get(key)?.trim();
    if (v) out[key] = v;
  }
  const list = (key: string) =>
    params
      .getAll(key)
      .flatMap((v) => v.split(','))
      .map((v) => v.trim())
      .filter(Boolean);
  const status = list('status');
  if (status.length) out.status = status;
  const country = list('country').map((c) => c.toUpperCase());
  if (country.length) out.country = country;
  const ftd = params.get('is_ftd');
  if (ftd === 'true' || ftd === 'false') out.is_ftd = ftd === 'true';
  const opened = params.get('autologin_opened');
  if (opened === 'true' || opened === 'false') out.autologin_opened = opened === 'true';
  const reinjected = params.get('reinjected');
  if (reinjected === 'true' || reinjected === 'false') out.reinjected = reinjected === 'true';
  // Flags the dashboard does not know (a stale link) are dropped like an unknown date type.
  const flag = list('flag').filter(isFlag);
  if (flag.length) out.flag = flag;
  const flagged = params.get('flagged');
  if (flagged === 'true' || flagged === 'false') out.flagged = flagged === 'true';
  // A whole number is passed on as is (the API says when it is past 100); anything else is dropped.
  const maxScore = params.get('max_score')?.trim();
  if (maxScore && /^\d+$/.test(maxScore)) out.max_score = Number(maxScore);
  if (params.get('order') === 'asc') out.order = 'asc';
  return out;
}

/** The API query → the URL's query string (the inverse of parseFilters). */
export function filtersToParams(f: FilterQuery): URLSearchParams {
  const p = new URLSearchParams();
  if (f.date_type && f.date_type !== 'registration') p.set('date_type', f.date_type);
  for (const key of TEXT_KEYS) {
    const v = (f[key] as string | undefined)?.trim();
    if (v) p.set(key, v);
  }
  for (const s of f.status ?? []) p.append('status', s);
  for (const c of f.country ?? []) p.append('country', c);
  if (f.is_ftd !== undefined) p.set('is_ftd', String(f.is_ftd));
  if (f.autologin_opened !== undefined) p.set('autologin_opened', String(f.autologin_opened));
  if (f.reinjected !== undefined) p.set('reinjected', String(f.reinjected));
  for (const flag of f.flag ?? []) p.append('flag', flag);
  if (f.flagged !== undefined) p.set('flagged', String(f.flagged));
  if (f.max_score !== undefined) p.set('max_score', String(f.max_score));
  if (f.order === 'asc') p.set('order', 'asc');
  return p;
}

/** The filters behind "More filters": how many of them are set (the sort order is not a filter). */
export function countMore(f: FilterQuery): number {
  const more = [
    f.date_type && f.date_type !== 'registration',
    f.campaign_id,
    f.flow_id,
    f.is_ftd !== undefined,
    f.autologin_opened !== undefined,
    f.reinjected !== undefined,
    f.sale_status,
    f.flag?.length,
    f.flagged !== undefined,
    f.max_score !== undefined,
  ];
  return more.filter(Boolean).length + ([1, 2, 3, 4, 5] as const).filter((n) => f[`sub_id${n}`]).length;
}

/** The date columns the table sorts by: clicking one sorts (and dates the From/To range) by it. */
export const SORT_BY: Record<string, DateType> = { created_at: 'registration', delivered_at: 'delivered', ftd: 'ftd' };

/** The filters after a click on a date column's header: that date, newest first; again: reversed. */
export function sortBy(f: FilterQuery, dateType: DateType): FilterQuery {
  const current = f.date_type ?? 'registration';
  const next: FilterQuery = { ...f, date_type: dateType };
  if (current === dateType && f.order !== 'asc') next.order = 'asc';
  else delete next.order;
  return next;
}

/**
 * The draft with one text filter set as typed: spaces stay while the operator types ("Ada "
 * on the way to "Ada Lovelace"); they are trimmed when the filters are applied (filtersToParams).
 */
export function setText(f: FilterQuery, key: TextKey, value: string | null): FilterQuery {
  const next = { ...f };
  if (value && value.trim()) next[key] = value;
  else delete next[key];
  return next;
}

/** How many filters are set (the sort order is not one). */
export const countActive = (f: FilterQuery) =>
  Array.from(filtersToParams(f).keys()).filter((k) => k !== 'order').length;

// ---- columns ----

export interface Column {
  key: string;
  label: string;
  render: (lead: Lead, clock: Clock) => string;
}

const text = (v: string | null) => v ?? '—';
const money = (n: number) => `$${n.toFixed(2)}`;

export const COLUMNS: Column[] = [
  { key: 'created_at', label: 'Registered', render: (l, c) => c.dateTime(l.created_at) },
  { key: 'name', label: 'Name', render: (l) => `${l.first_name} ${l.last_name}` },
  { key: 'email', label: 'Email', render: (l) => l.email },
  { key: 'phone', label: 'Phone', render: (l) => l.phone },
  { key: 'country', label: 'Country', render: (l) => l.country },
  { key: 'status', label: 'Status', render: (l) => l.status },
  // The table shows a flagged lead's score as a badge with its flags (LeadsTable).
  { key: 'quality', label: 'Quality', render: (l) => scoreText(l.quality_score) },
  { key: 'partner', label: 'Partner', render: (l) => text(l.partner_name) },
  { key: 'provider', label: 'Traffic provider', render: (l) => text(l.traffic_provider_name) },
  { key: 'campaign', label: 'Campaign', render: (l) => text(l.campaign_name) },
  { key: 'flow', label: 'Flow', render: (l) => text(l.flow_name) },
  { key: 'sale_status', label: 'Sale status', render: (l) => text(l.sale_status) },
  { key: 'ftd', label: 'FTD', render: (l, c) => (l.is_ftd ? c.dateTime(l.ftd_at) : 'No') },
  { key: 'delivered_at', label: 'Delivered', render: (l, c) => c.dateTime(l.delivered_at) },
  { key: 'reason', label: 'Reason', render: (l) => text(l.reason) },
  { key: 'sub_id1', label: 'Sub ID 1', render: (l) => text(l.sub_id1) },
  { key: 'payout', label: 'Payout', render: (l) => money(l.payout) },
  { key: 'revenue', label: 'Revenue', render: (l) => money(l.revenue) },
];

const DEFAULT_COLUMNS = [
  'created_at',
  'name',
  'email',
  'country',
  'status',
  'quality',
  'partner',
  'provider',
  'campaign',
  'ftd',
];
const COLUMNS_KEY = 'leadgate.leads.columns';

/** The operator's chosen columns; the defaults when nothing (or nothing valid) is stored. */
export function loadColumns(): string[] {
  try {
    const stored: unknown = JSON.parse(localStorage.getItem(COLUMNS_KEY) ?? 'null');
    if (Array.isArray(stored)) {
      const known = stored.filter((k): k is string => COLUMNS.some((c) => c.key === k));
      if (known.length) return known;
    }
  } catch {
    // A damaged entry is replaced by the defaults on the next change.
  }
  return DEFAULT_COLUMNS;
}

export function saveColumns(keys: string[]) {
  localStorage.setItem(COLUMNS_KEY, JSON.stringify(keys));
}
