import { leadOpens } from '../autologin/service.js';
import { sql, type Expression, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool } from 'kysely';
import { compiledOnce } from '../../db/compiled.js';
import { fromJson, jsonArrayFrom } from '../../db/json.js';
import { isPostgres, PREPARED } from '../../db/database.js';
import type { Database, LeadAttemptsTable, LeadsTable, LeadStatusHistoryTable } from '../../db/tables.js';
import type { Skip } from '../../distribution/route.js';
import { namesOf } from '../../db/names.js';
import { leadInScope, rowInScope, type DataScope } from '../../db/scope.js';
import { contactMasker, maskEmail, maskPhone, type Masker } from '../../privacy/mask.js';
import { DATE_COLUMNS, SUB_IDS, type LeadFilter, type TextMatch } from './search.js';

type DB = Kysely<Database>;

/** Where the previous page ended: the last row's date (of the chosen date_type) and id. */
export interface SortKey {
  d: string;
  id: string;
}

/** The smallest string after every string that starts with `prefix`, in code point order. */
export function prefixEnd(prefix: string): string | null {
  const cps = [...prefix].map((c) => c.codePointAt(0)!);
  while (cps.length && cps[cps.length - 1] === 0x10ffff) cps.pop();
  if (!cps.length) return null;
  const last = cps.pop()! + 1;
  cps.push(last === 0xd800 ? 0xe000 : last); // skip the surrogate block
  return String.fromCodePoint(...cps);
}

/**
 * How a name prefix is compared. PostgreSQL: on the indexed expression; its planner weighs the
 * name indexes against walking the date index. SQLite has no statistics to weigh them with, so
 * a probe decides (findLeads): a rare name reads its few index entries ('index'); a common one
 * walks the date index and tests each row ('scan', the same expression made unindexable), which
 * finds a page after a few hundred rows instead of sorting thousands of matches.
 */
type NameMode = 'postgres' | 'index' | 'scan';

/**
 * Case-insensitive "name starts with" as a range on the expression the name indexes hold (see
 * migration 20261122T020000Z_lead_name_search): byte/code point order on both engines, where a
 * prefix is exactly a range. The typed prefix is folded the way that engine's lower() folds:
 * SQLite's lower() only knows ASCII, so there "Ö" must be typed as stored.
 */
function nameStartsWith(mode: NameMode, column: 'first_name' | 'last_name', typed: string) {
  const ref = sql.ref(`leads.${column}`);
  const expr =
    mode === 'postgres'
      ? sql`(lower(${ref}) collate "C")`
      : mode === 'index'
        ? sql`lower(${ref})`
        : sql`(lower(${ref}) || '')`;
  const prefix = mode === 'postgres' ? typed.toLowerCase() : typed.replace(/[A-Z]+/g, (c) => c.toLowerCase());
  const end = prefixEnd(prefix);
  return end === null ? sql<SqlBool>`${expr} >= ${prefix}` : sql<SqlBool>`(${expr} >= ${prefix} and ${expr} < ${end})`;
}

/** SQLite: a name matching at least this many leads is searched by walking the date index. */
const COMMON_NAME = 1000;

async function nameMode(db: DB, m: TextMatch): Promise<NameMode> {
  if (isPostgres(db)) return 'postgres';
  if (!m.name) return 'index';
  const whole = m.name.whole;
  const probe = db
    .selectFrom('leads')
    .select(sql`1`.as('one'))
    .where((eb) => eb.or([nameStartsWith('index', 'first_name', whole), nameStartsWith('index', 'last_name', whole)]))
    .limit(COMMON_NAME);
  const { n } = await db
    .selectFrom(probe.as('p'))
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n) >= COMMON_NAME ? 'scan' : 'index';
}

function textCondition(eb: ExpressionBuilder<Database, 'leads'>, m: TextMatch, mode: NameMode) {
  // Each branch is an exact match on an indexed column (id, email, phone) or a name range.
  const any: Expression<SqlBool>[] = [eb('leads.id', '=', m.id)];
  if (m.email) any.push(eb('leads.email', '=', m.email));
  if (m.phone) any.push(eb('leads.phone', '=', m.phone));
  if (m.name) {
    any.push(nameStartsWith(mode, 'first_name', m.name.whole), nameStartsWith(mode, 'last_name', m.name.whole));
    if (m.name.first && m.name.last) {
      any.push(
        eb.and([nameStartsWith(mode, 'first_name', m.name.first), nameStartsWith(mode, 'last_name', m.name.last)]),
      );
    }
  }
  return eb.or(any);
}

/**
 * The leads a filter selects, after `after`, newest first by the chosen date then id. No OFFSET
 * and no count: the date range and the keyset bound walk a (date, id) index, or an equality
 * filter's (column, created_at, id) index when the date is registration; the remaining filters
 * are tested on the rows that walk meets, and the walk stops at `limit`.
 */
function selectLeads(db: DB, f: LeadFilter, after: SortKey | null, limit: number, mode: NameMode) {
  const col = `leads.${DATE_COLUMNS[f.dateType]}` as const;
  let q = db.selectFrom('leads').selectAll('leads');
  if (f.from !== null) q = q.where(col, '>=', f.from);
  if (f.to !== null) q = q.where(col, '<', f.to);
  if (f.dateType !== 'registration') q = q.where(col, 'is not', null);
  const asc = f.order === 'asc';
  if (after) {
    // The plain bound lets both planners start the index scan at the cursor; the row value
    // comparison settles ties on the date by id.
    q = asc
      ? q.where(col, '>=', after.d).where((eb) => eb(eb.refTuple(col, 'leads.id'), '>', eb.tuple(after.d, after.id)))
      : q.where(col, '<=', after.d).where((eb) => eb(eb.refTuple(col, 'leads.id'), '<', eb.tuple(after.d, after.id)));
  }
  // The (column, created_at, id) indexes only serve the registration order. Sorted by another
  // date, SQLite (no statistics) would still pick one for an equality filter and then sort all
  // of that partner's or status's leads; a no-op "|| ''" keeps it on the date index instead.
  // PostgreSQL weighs the choice itself.
  const walk = f.dateType !== 'registration' && !isPostgres(db);
  const plain = (c: 'status' | 'country' | 'partner_id' | 'traffic_provider_id' | 'campaign_id' | 'flow_id') =>
    walk ? sql<string>`(${sql.ref(`leads.${c}`)} || '')` : sql.ref<string>(`leads.${c}`);
  if (f.status.length) q = q.where(plain('status'), 'in', f.status);
  if (f.country.length) q = q.where(plain('country'), 'in', f.country);
  if (f.partner_id !== undefined) q = q.where(plain('partner_id'), '=', f.partner_id);
  if (f.traffic_provider_id !== undefined) q = q.where(plain('traffic_provider_id'), '=', f.traffic_provider_id);
  if (f.campaign_id !== undefined) q = q.where(plain('campaign_id'), '=', f.campaign_id);
  if (f.flow_id !== undefined) q = q.where(plain('flow_id'), '=', f.flow_id);
  if (f.is_ftd !== undefined) {
    // Written so that no index on ftd_at can serve it: on SQLite "ftd_at is [not] null" would
    // pick that index and sort every FTD (or every other lead) by date. Walking the date index
    // and testing each row finds a page fast whenever FTDs are not vanishingly rare.
    if (f.dateType === 'ftd') q = q.where('leads.ftd_at', f.is_ftd ? 'is not' : 'is', null);
    else q = q.where(sql<string>`coalesce(${sql.ref('leads.ftd_at')}, '')`, f.is_ftd ? '<>' : '=', '');
  }
  if (f.autologin_opened !== undefined) {
    // The lead's tracked links (autologin_links_lead: lead_id first), tested on the rows the walk meets.
    const opened = (eb: ExpressionBuilder<Database, 'leads'>) =>
      eb.exists(
        eb
          .selectFrom('autologin_links')
          .select('autologin_links.lead_id')
          .whereRef('autologin_links.lead_id', '=', 'leads.id')
          .where('autologin_links.opens', '>', 0),
      );
    const tracked = (eb: ExpressionBuilder<Database, 'leads'>) =>
      eb.exists(
        eb
          .selectFrom('autologin_links')
          .select('autologin_links.lead_id')
          .whereRef('autologin_links.lead_id', '=', 'leads.id'),
      );
    q = f.autologin_opened ? q.where(opened) : q.where((eb) => eb.and([tracked(eb), eb.not(opened(eb))]));
  }
  if (f.reinjected !== undefined) {
    // A job's items (injection_items_lead: lead_id first) that went out, tested on the rows the walk meets.
    const sent = (eb: ExpressionBuilder<Database, 'leads'>) =>
      eb.exists(
        eb
          .selectFrom('injection_items')
          .select('injection_items.lead_id')
          .whereRef('injection_items.lead_id', '=', 'leads.id')
          .where('injection_items.state', 'in', ['sent', 'delivered', 'refused']),
      );
    q = f.reinjected ? q.where(sent) : q.where((eb) => eb.not(sent(eb)));
  }
  if (f.sale_status !== undefined) q = q.where('leads.sale_status', '=', f.sale_status);
  if (f.ids.length) q = q.where('leads.id', 'in', f.ids);
  for (const k of SUB_IDS) {
    const v = f.subIds[k];
    if (v !== undefined) q = q.where(`leads.${k}`, '=', v);
  }
  const text = f.q;
  if (text) q = q.where((eb) => textCondition(eb, text, mode));
  const inScope = leadInScope(f.scope); // null for an open scope: no extra clause
  if (inScope) q = q.where(inScope);
  const dir = asc ? 'asc' : 'desc';
  return q.orderBy(col, dir).orderBy('leads.id', dir).limit(limit);
}

/** A lead row with the names of what it refers to (null when that record is gone). */
export type LeadRow = Selectable<LeadsTable> & {
  traffic_provider_name: string | null;
  campaign_name: string | null;
  flow_name: string | null;
  partner_name: string | null;
};

/** Joins the names onto already-limited rows, so the joins never steer the index choice. */
// The names operators gave the lead's provider, campaign, flow and partner, as scalar subqueries:
// on SQLite a chain of left joins costs three times as much for the same rows (measured on one
// lead: 67 µs against 21 µs).
const names = (eb: ExpressionBuilder<Database & { l: LeadsTable }, 'l'>) => [
  eb
    .selectFrom('traffic_providers as tp')
    .select('tp.name')
    .whereRef('tp.id', '=', 'l.traffic_provider_id')
    .as('traffic_provider_name'),
  eb.selectFrom('campaigns as c').select('c.name').whereRef('c.id', '=', 'l.campaign_id').as('campaign_name'),
  eb.selectFrom('flows as fl').select('fl.name').whereRef('fl.id', '=', 'l.flow_id').as('flow_name'),
  eb.selectFrom('partners as p').select('p.name').whereRef('p.id', '=', 'l.partner_id').as('partner_name'),
];

function withNames(db: DB, inner: ReturnType<typeof selectLeads>) {
  return db.selectFrom(inner.as('l')).selectAll('l').select(names);
}

/** Up to `limit` leads after the cursor, in page order. */
export async function findLeads(db: DB, f: LeadFilter, after: SortKey | null, limit: number): Promise<LeadRow[]> {
  const col = DATE_COLUMNS[f.dateType];
  const mode = f.q ? await nameMode(db, f.q) : 'index';
  const rows = (await withNames(db, selectLeads(db, f, after, limit, mode)).execute()) as LeadRow[];
  // The outer select may return the joined rows in any order: restore the page order.
  const sign = f.order === 'asc' ? -1 : 1;
  return rows.sort(
    (a, b) => sign * (a[col]! < b[col]! ? 1 : a[col]! > b[col]! ? -1 : a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
  );
}

/**
 * How many leads match, counted up to `cap` + 1 by the same bounded index walk as a page (so a
 * count costs at most `cap` rows read, whatever the table's size). A null cap counts every match
 * (asked for on purpose: its cost grows with the matches).
 */
export async function countLeads(
  db: DB,
  f: LeadFilter,
  cap: number | null,
): Promise<{ count: number; exact: boolean }> {
  const mode = f.q ? await nameMode(db, f.q) : 'index';
  const walk = selectLeads(db, f, null, (cap ?? 0) + 1, mode);
  const inner = (cap === null ? walk.clearLimit().clearOrderBy() : walk).clearSelect().select(sql<number>`1`.as('one'));
  const row = await db
    .selectFrom(inner.as('m'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  const n = Number(row.n);
  return cap !== null && n > cap ? { count: cap, exact: false } : { count: n, exact: true };
}

/**
 * The ids of every lead a filter selects, as a query (no order, no limit): the selection a
 * re-injection job is made of by one INSERT … SELECT (modules/injections), and its count.
 */
export async function matchingLeadIds(db: DB, f: LeadFilter) {
  const mode = f.q ? await nameMode(db, f.q) : 'index';
  return selectLeads(db, f, null, 1, mode).clearLimit().clearOrderBy().clearSelect().select('leads.id');
}

/**
 * The distinct sale statuses in use, sorted, at most `limit`: a loose index scan (one seek per
 * value on leads_sale_status), so the cost follows the number of values, not of leads.
 */
export async function saleStatusesInUse(db: DB, limit: number, scope: DataScope): Promise<string[]> {
  const inScope = leadInScope(scope);
  if (inScope) {
    // A scoped reader: the values on its own leads only (no loose scan: the scope's leads are few).
    const scoped = await db
      .selectFrom('leads')
      .select('sale_status')
      .distinct()
      .where('sale_status', 'is not', null)
      .where(inScope)
      .orderBy('sale_status')
      .limit(limit)
      .execute();
    return scoped.map((r) => r.sale_status!);
  }
  const { rows } = await sql<{ v: string | null }>`
    with recursive s(v) as (
      select min(sale_status) from leads
      union all
      select (select min(sale_status) from leads where sale_status > s.v) from s where s.v is not null
    )
    select v from s where v is not null limit ${limit}`.execute(db);
  return rows.map((r) => r.v!);
}

export const sortKeyOf = (f: LeadFilter, row: LeadRow): SortKey => ({ d: row[DATE_COLUMNS[f.dateType]]!, id: row.id });

// GET /api/leads/{id}, the API's hottest read for scripts: the lead, its names and its
// attempts (as a JSON array) in one statement, built once (db/compiled.ts). One round trip on
// PostgreSQL; on SQLite a statement's fixed cost is most of a point read's.
const leadWithAttempts = compiledOnce((db: DB, id: string) =>
  db
    .selectFrom('leads as l')
    .selectAll('l')
    .select(names)
    .select((eb) => {
      const attempts = eb
        .selectFrom('lead_attempts as a')
        .select((e) => [
          'a.id',
          'a.attempt_no',
          'a.partner_id',
          e.selectFrom('partners as p').select('p.name').whereRef('p.id', '=', 'a.partner_id').as('partner_name'),
          'a.requested_at',
          'a.duration_ms',
          'a.http_status',
          'a.outcome',
          'a.reason',
          'a.response_excerpt',
          'a.injection_id',
        ])
        .whereRef('a.lead_id', '=', 'l.id');
      return jsonArrayFrom(db, attempts).as('attempts');
    })
    .select((eb) =>
      jsonArrayFrom(
        db,
        eb
          .selectFrom('lead_status_history as h')
          .select(['h.id', 'h.at', 'h.source', 'h.sale_status', 'h.previous_sale_status', 'h.ftd_at'])
          .whereRef('h.lead_id', '=', 'l.id'),
      ).as('status_history'),
    )
    .where('l.id', '=', id)
    .modifyEnd(sql.raw(PREPARED)),
);

type AttemptRow = Omit<Selectable<LeadAttemptsTable>, 'lead_id'> & { partner_name: string | null };

type HistoryRow = Omit<Selectable<LeadStatusHistoryTable>, 'lead_id'>;

/** A lead with its names, its attempts in order (attempt, time, id) and its status history (oldest first), or undefined. */
export async function findLead(
  db: DB,
  id: string,
): Promise<(LeadRow & { attempts: Omit<AttemptRow, 'id'>[]; status_history: Omit<HistoryRow, 'id'>[] }) | undefined> {
  const [row] = await leadWithAttempts(db, id);
  if (!row) return undefined;
  // In order here: an aggregate does not promise its subquery's order (db/json.ts).
  const attempts = fromJson(row.attempts) as AttemptRow[];
  attempts.sort((a, b) => a.attempt_no - b.attempt_no || cmp(a.requested_at, b.requested_at) || cmp(a.id, b.id));
  const history = fromJson(row.status_history) as HistoryRow[];
  history.sort((a, b) => Number(a.id) - Number(b.id));
  return {
    ...(row as LeadRow),
    attempts: attempts.map(({ id: _, ...a }) => a),
    status_history: history.map(({ id: _, ...h }) => h),
  };
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

const money = (cents: number) => Number(cents) / 100;

/**
 * Fields that never hold a lead's contacts: ids, times, enums, checked values (the IP, the
 * country) and the names an operator gave partners, providers, campaigns and flows. Every other
 * text is masked; a new field is masked until it is listed here.
 */
const NO_CONTACTS = new Set([
  'id',
  'created_at',
  'country',
  'ip',
  'traffic_provider_id',
  'traffic_provider_name',
  'campaign_id',
  'campaign_name',
  'flow_id',
  'flow_name',
  'partner_id',
  'partner_name',
  'status',
  'delivered_at',
  'ftd_at',
  'status_updated_at',
  'email',
  'phone',
  'attempt_no',
  'requested_at',
  'outcome',
]);

/** Every text field of `view` that may hold contacts, through `mask` (in place). */
function maskFields<T extends object>(view: T, mask: Masker): T {
  const fields = view as Record<string, unknown>;
  for (const k of Object.keys(fields)) {
    const v = fields[k];
    if (typeof v === 'string' && !NO_CONTACTS.has(k)) fields[k] = mask(v);
  }
  return view;
}

/**
 * The API's view of a lead. Without leads:contacts the email and phone are masked, and so is
 * every spelling of them in any other text of the lead (a reason quoting the partner, a sub id,
 * an autologin URL carrying the email): pass the lead's masker when it is made anyway.
 */
export function toLead(r: LeadRow, contacts: boolean, mask: Masker | null = contacts ? null : contactMasker(r)) {
  const view = {
    id: r.id,
    created_at: r.created_at,
    first_name: r.first_name,
    last_name: r.last_name,
    email: contacts ? r.email : maskEmail(r.email),
    phone: contacts ? r.phone : maskPhone(r.phone),
    country: r.country,
    ip: r.ip,
    language: r.language,
    funnel: r.funnel,
    sub_id1: r.sub_id1,
    sub_id2: r.sub_id2,
    sub_id3: r.sub_id3,
    sub_id4: r.sub_id4,
    sub_id5: r.sub_id5,
    traffic_provider_id: r.traffic_provider_id,
    traffic_provider_name: r.traffic_provider_name ?? null,
    campaign_id: r.campaign_id,
    campaign_name: r.campaign_name ?? null,
    flow_id: r.flow_id,
    flow_name: r.flow_name ?? null,
    partner_id: r.partner_id,
    partner_name: r.partner_name ?? null,
    status: r.status,
    reason: r.reason,
    partner_lead_id: r.partner_lead_id,
    sale_status: r.sale_status,
    autologin_url: r.autologin_url,
    delivered_at: r.delivered_at,
    ftd_at: r.ftd_at,
    is_ftd: r.ftd_at !== null,
    status_updated_at: r.status_updated_at,
    payout: money(r.cost_cents),
    revenue: money(r.revenue_cents),
  };
  return mask ? maskFields(view, mask) : view;
}

export type LeadView = ReturnType<typeof toLead>;

type StoredVerdict = Omit<Skip, 'name'>;

/** Why the lead's flow's other partners were not offered it (route.ts, verdictsJson), with their names now. */
async function verdictsOf(db: DB, json: string | null, scope: DataScope) {
  if (json === null) return [];
  const verdicts = (JSON.parse(json) as StoredVerdict[]).filter((v) => partnerInScope(scope, v.partner_id));
  const names = await namesOf(db, 'partner', [...new Set(verdicts.map((v) => v.partner_id))]);
  return verdicts.map((v) => ({
    partner_id: v.partner_id,
    partner_name: names.get(v.partner_id) ?? null,
    verdict: v.verdict,
    reason: v.reason,
    cap: v.cap ?? null,
  }));
}

/** A partner-scoped reader sees only its partners' attempts and verdicts on a lead it may read. */
const partnerInScope = (scope: DataScope, partnerId: string) =>
  scope.partnerIds === null || scope.partnerIds.includes(partnerId);

/** The lead in full, or null when there is none or it is out of the reader's scope (404 alike). */
export async function leadDetail(db: DB, id: string, contacts: boolean, scope: DataScope) {
  const row = await findLead(db, id);
  if (!row || !rowInScope(scope, row)) return null;
  const { attempts, status_history } = row;
  const mask = contacts ? null : contactMasker(row);
  return {
    ...toLead(row, contacts, mask),
    verdicts: await verdictsOf(db, row.verdicts, scope),
    autologin_opens: await leadOpens(db, row.id, contacts),
    // A sale status is the partner's text: it may quote the contacts too.
    status_history: mask ? status_history.map((h) => maskFields(h, mask)) : status_history,
    // The reason and the excerpt quote the partner's answer, which may echo the contacts back.
    attempts: attempts
      .filter((a) => partnerInScope(scope, a.partner_id))
      .map((a) => {
        const attempt = { ...a, partner_name: a.partner_name ?? null };
        return mask ? maskFields(attempt, mask) : attempt;
      }),
  };
}

/** A lead's status, or undefined when there is no such lead. */
export const leadStatus = (db: DB, id: string) =>
  db
    .selectFrom('leads')
    .select(['id', 'status', 'country', 'traffic_provider_id', 'partner_id'])
    .where('id', '=', id)
    .executeTakeFirst();

export const isLiveFlow = async (db: DB, id: string) =>
  !!(await db
    .selectFrom('flows')
    .select('id')
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .executeTakeFirst());

/** The countries a partner takes (empty: every one), or null when it does not exist or is archived. */
export const livePartnerCountries = async (db: DB, id: string): Promise<string[] | null> => {
  const row = await db
    .selectFrom('partners')
    .select('countries')
    .where('id', '=', id)
    .where('archived_at', 'is', null)
    .executeTakeFirst();
  return row ? (JSON.parse(row.countries) as string[]) : null;
};

/**
 * Moves a rejected or failed lead back to pending under a short claim (`claimMs`, until the
 * engine's own lease takes over); false when it is no longer rejected or failed.
 */
export async function claimForRedelivery(db: DB, id: string, now: number, claimMs: number): Promise<boolean> {
  const claimed = await db
    .updateTable('leads')
    .set({
      status: 'pending',
      reason: null,
      lease_until: new Date(now + claimMs).toISOString(),
      status_updated_at: new Date(now).toISOString(),
    })
    .where('id', '=', id)
    .where('status', 'in', ['rejected', 'failed'])
    .executeTakeFirst();
  return Number(claimed.numUpdatedRows) > 0;
}
