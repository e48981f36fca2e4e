// Lead search: the Leads table's rows and counts under its filters (search.ts makes the filter),
// keyset pages, and the names each row shows. queries.ts holds one lead's reads and writes.
import {
  expressionBuilder,
  sql,
  type Expression,
  type ExpressionBuilder,
  type CompiledQuery,
  type Kysely,
  type Selectable,
  type SqlBool,
} from 'kysely';
import { isPostgres } from '../../db/database.js';
import type { Database, LeadsTable } from '../../db/tables.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import { DATE_COLUMNS, SUB_IDS, type LeadFilter, type TextMatch } from './search.js';
import { inPageOrder } from './page-order.js';
import {
  countOf,
  everyProvider,
  leadsFrom,
  nameStartsWith,
  planOf,
  SENT_STATES,
  type NameMode,
  type Plan,
} from './search-plan.js';
type DB = Kysely<Database>;

/** Where the previous page ended: the last row's date (of the chosen date_type) and id. */
export interface SortKey {
  d: string;
  id: string;
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
function selectLeads(db: DB, f: LeadFilter, after: SortKey | null, limit: number, { mode, subIds, drive }: Plan) {
  const col = `leads.${DATE_COLUMNS[f.dateType]}` as const;
  let q = leadsFrom(db, drive).select(ROW_COLUMNS.map((c) => `leads.${c}` as const));
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
  /** The column as an expression no index serves (its value unchanged). */
  const unindexed = (c: string) => sql<string>`(${sql.ref(`leads.${c}`)} || '')`;
  const plain = (
    c: 'status' | 'country' | 'partner_id' | 'traffic_provider_id' | 'campaign_id' | 'flow_id' | 'sale_status',
  ) => (walk ? unindexed(c) : sql.ref<string>(`leads.${c}`));
  if (f.status.length) q = q.where(plain('status'), 'in', f.status);
  if (f.country.length) q = q.where(plain('country'), 'in', f.country);
  if (f.partner_id !== undefined) q = q.where(plain('partner_id'), '=', f.partner_id);
  if (f.traffic_provider_id !== undefined) q = q.where(plain('traffic_provider_id'), '=', f.traffic_provider_id);
  if (f.campaign_id !== undefined) q = q.where(plain('campaign_id'), '=', f.campaign_id);
  if (f.flow_id !== undefined) q = q.where(plain('flow_id'), '=', f.flow_id);
  // leads_flagged holds only the flagged leads, in registration order: a flag, "Flagged" and a
  // score cap under 100 (a score under 100 needs a flag, as weights are 0–100) walk it, not every
  // lead, however rare the match. Sorted by another date, "+ 0" keeps SQLite off it.
  const flaggedOnly = f.flags !== 0 || f.flagged === true || (f.max_score !== undefined && f.max_score < 100);
  // A literal 0: a planner uses a partial index only for a condition it can see implies its own.
  if (flaggedOnly) q = q.where(walk ? sql<SqlBool>`(leads.flags + 0) <> 0` : sql<SqlBool>`leads.flags <> 0`);
  if (f.flags) q = q.where(sql<number>`${sql.ref('leads.flags')} & ${f.flags}`, '<>', 0);
  if (f.flagged === false) q = q.where('leads.flags', '=', 0);
  if (f.max_score !== undefined) q = q.where('leads.quality_score', '<=', f.max_score);
  if (f.is_ftd !== undefined) {
    // Written so that no index on ftd_at can serve it: on SQLite "ftd_at is [not] null" would
    // pick that index and sort every FTD (or every other lead) by date. Walking the date index
    // and testing each row finds a page fast whenever FTDs are not vanishingly rare.
    // PostgreSQL estimates "is [not] null" from its statistics (about 95 % of leads have no FTD)
    // and walks the date index; the coalesce form it guesses at 0.5 % and answered by reading
    // and sorting every lead without an FTD.
    if (f.dateType === 'ftd' || isPostgres(db)) q = q.where('leads.ftd_at', f.is_ftd ? 'is not' : 'is', null);
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
          .where('injection_items.state', 'in', SENT_STATES),
      );
    q = f.reinjected ? q.where(sent) : q.where((eb) => eb.not(sent(eb)));
  }
  // leads_sale_status is (sale_status, created_at, id) too: a common status holds 800,000 of
  // 10,000,000 leads, which another date's order would otherwise sort.
  if (f.sale_status !== undefined) q = q.where(plain('sale_status'), '=', f.sale_status);
  if (f.ids.length) q = q.where('leads.id', 'in', f.ids);
  for (const k of SUB_IDS) {
    const v = f.subIds[k];
    if (v === undefined) continue;
    if (subIds[k] === 'scan') q = q.where(unindexed(k), '=', v);
    else {
      q = q.where(`leads.${k}`, '=', v);
      if (subIds[k] === 'index') q = q.where('leads.traffic_provider_id', 'in', everyProvider(db));
    }
  }
  const text = f.q;
  if (text) q = q.where((eb) => textCondition(eb, text, mode));
  const inScope = leadInScope(f.scope); // null for an open scope: no extra clause
  if (inScope) q = q.where(inScope);
  const dir = asc ? 'asc' : 'desc';
  return q.orderBy(col, dir).orderBy('leads.id', dir).limit(limit);
}

/**
 * The columns a lead row carries: what the API's view of a lead shows (view.ts toLead) and the
 * dates pages are sorted by. The rest (verdicts, the contact digests, the delivery lease, the
 * import) stays in the table: a page of 50 reads a sixth fewer values.
 */
const ROW_COLUMNS = [
  'id',
  'created_at',
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'ip',
  'language',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
  'traffic_provider_id',
  'campaign_id',
  'flow_id',
  'partner_id',
  'status',
  'reason',
  'partner_lead_id',
  'sale_status',
  'autologin_url',
  'delivered_at',
  'ftd_at',
  'status_updated_at',
  'cost_cents',
  'revenue_cents',
  'flags',
  'quality_score',
] as const satisfies readonly (keyof LeadsTable)[];

/** The names of what a lead refers to (null when that record is gone). */
export interface LeadNames {
  traffic_provider_name: string | null;
  campaign_name: string | null;
  flow_name: string | null;
  partner_name: string | null;
}

/** A lead row with its names. */
export type LeadRow = Pick<Selectable<LeadsTable>, (typeof ROW_COLUMNS)[number]> & LeadNames;

// The names operators gave the lead's provider, campaign, flow and partner, as scalar subqueries:
// on SQLite a chain of left joins costs three times as much for the same rows (measured on one
// lead: 67 µs against 21 µs).
/** The names a lead row shows (its provider, campaign, flow and partner), as columns. */
export const names = (eb: ExpressionBuilder<Database & { l: LeadsTable }, 'l'>) => [
  eb
    .selectFrom('traffic_providers as tp')
    .select('tp.name')
    .whereRef('tp.id', '=', 'l.traffic_provider_id')
    .as('traffic_provider_name'),
  eb.selectFrom('campaigns as c').select('c.name').whereRef('c.id', '=', 'l.campaign_id').as('campaign_name'),
  eb.selectFrom('flows as fl').select('fl.name').whereRef('fl.id', '=', 'l.flow_id').as('flow_name'),
  eb.selectFrom('partners as p').select('p.name').whereRef('p.id', '=', 'l.partner_id').as('partner_name'),
];

/** The names built once (Kysely's nodes are immutable): building them was a third of a page's query building. */
const NAMES = names(expressionBuilder<Database & { l: LeadsTable }, 'l'>());

/** Joins the names onto already-limited rows, so the joins never steer the index choice. */
function withNames(db: DB, inner: ReturnType<typeof selectLeads>) {
  return db.selectFrom(inner.as('l')).selectAll('l').select(NAMES);
}

/**
 * The statement of one page: up to `limit` leads after the cursor with their names, made by
 * `plan` (planOf(db, f, 'page')). Its rows come in any order: inPageOrder restores the page's.
 * The export's thread runs these compiled, so it needs no query builder (exporter.ts).
 */
export function pageQuery(db: DB, f: LeadFilter, after: SortKey | null, limit: number, plan: Plan): CompiledQuery {
  return withNames(db, selectLeads(db, f, after, limit, plan)).compile();
}

/** Up to `limit` leads after the cursor, in page order. */
export async function findLeads(db: DB, f: LeadFilter, after: SortKey | null, limit: number): Promise<LeadRow[]> {
  const { rows } = await db.executeQuery<LeadRow>(pageQuery(db, f, after, limit, await planOf(db, f, 'page')));
  return inPageOrder(rows, DATE_COLUMNS[f.dateType], f.order);
}

/**
 * How many leads match, counted up to `cap` + 1 by the index walk a page takes, or, for a name or
 * sub id without a date range, from that index in no order (never the date walk a page of a
 * common one takes). A null cap counts every match (asked for on purpose: its cost grows with
 * the matches).
 */
export async function countLeads(
  db: DB,
  f: LeadFilter,
  cap: number | null,
): Promise<{ count: number; exact: boolean }> {
  const plan = await planOf(db, f, 'all');
  const walk = selectLeads(db, f, null, (cap ?? 0) + 1, plan);
  // A capped count keeps the page's order (SQLite then walks the index a page would, to cap + 1
  // matches) unless the plan reads a name or sub id index, in no order.
  const inner = (cap === null ? walk.clearLimit().clearOrderBy() : plan.unordered ? walk.clearOrderBy() : walk)
    .clearSelect()
    .select(sql<number>`1`.as('one'));
  const n = await countOf(db, inner);
  return cap !== null && n > cap ? { count: cap, exact: false } : { count: n, exact: true };
}

/**
 * The ids of every lead a filter selects, as a query (no order, no limit): the selection a
 * re-injection job is made of by one INSERT … SELECT (modules/injections), and its count.
 */
export async function matchingLeadIds(db: DB, f: LeadFilter) {
  return selectLeads(db, f, null, 1, await planOf(db, f, 'all'))
    .clearLimit()
    .clearOrderBy()
    .clearSelect()
    .select('leads.id');
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
      select min(sale_status) from leads where sale_status is not null
      union all
      select (select min(sale_status) from leads where sale_status > s.v) from s where s.v is not null
    )
    select v from s where v is not null limit ${limit}`.execute(db);
  return rows.map((r) => r.v!);
}

export const sortKeyOf = (f: LeadFilter, row: LeadRow): SortKey => ({ d: row[DATE_COLUMNS[f.dateType]]!, id: row.id });
