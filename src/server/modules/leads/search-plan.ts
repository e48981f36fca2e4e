// How a lead search reads on each engine: the probes that choose, on SQLite (which has no
// statistics on a fresh install, and misleading ones for skewed values), between an index and a
// walk of the date index, and the linked set a search may start from. search-queries.ts builds
// the statement from the plan.
import { sql, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
import { isPostgres } from '../../db/database.js';
import type { Database } from '../../db/tables.js';
import { SUB_IDS, type LeadFilter, type SubId, type TextMatch } from './search.js';
type DB = Kysely<Database>;

/** The smallest string after every string that starts with `prefix`, in code point order. */
export function prefixEnd(prefix: string): string | null {
  const cps = [...prefix].map((c) => c.codePointAt(0)!);
  while (cps.length && cps[cps.length - 1] === 0x10ffff) cps.pop();
  if (!cps.length) return null;
  const last = cps.pop()! + 1;
  cps.push(last === 0xd800 ? 0xe000 : last); // skip the surrogate block
  return String.fromCodePoint(...cps);
}

/** How many rows `query` returns (give it a limit to make that a bounded probe). */
export async function countOf<TB extends keyof Database>(
  db: DB,
  query: SelectQueryBuilder<Database, TB, object>,
): Promise<number> {
  const { n } = await db
    .selectFrom(query.as('p'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

/**
 * How a name prefix is compared. PostgreSQL: on the indexed expression; its planner weighs the
 * name indexes against walking the date index. SQLite has no statistics to weigh them with, so
 * a probe decides (findLeads): a rare name reads its few index entries ('index'); a common one
 * walks the date index and tests each row ('scan', the same expression made unindexable), which
 * finds a page after a few hundred rows instead of sorting thousands of matches.
 */
export type NameMode = 'postgres' | 'index' | 'scan';

/**
 * Case-insensitive "name starts with" as a range on the expression the name indexes hold (see
 * migration 20261122T020000Z_lead_name_search): byte/code point order on both engines, where a
 * prefix is exactly a range. The typed prefix is folded the way that engine's lower() folds:
 * SQLite's lower() only knows ASCII, so there "Ö" must be typed as stored.
 */
export function nameStartsWith(mode: NameMode, column: 'first_name' | 'last_name', typed: string) {
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

/** SQLite: a name or sub id matching at least this many leads is searched by walking the date index. */
const COMMON = 1000;

async function nameMode(db: DB, m: TextMatch): Promise<NameMode> {
  if (isPostgres(db)) return 'postgres';
  if (!m.name) return 'index';
  const { whole, first, last } = m.name;
  const common = async (condition: Expression<SqlBool>) =>
    (await countOf(
      db,
      db
        .selectFrom('leads')
        .select(sql`1`.as('one'))
        .where(condition)
        .limit(COMMON),
    )) >= COMMON;
  const either = sql<SqlBool>`(${nameStartsWith('index', 'first_name', whole)} or ${nameStartsWith('index', 'last_name', whole)})`;
  if (await common(either)) return 'scan';
  // "Ava Jones": each name alone may be common (300,000 of 10,000,000 leads) and the pair too
  // (32,000), which the index would read and sort. leads_last_first_lower answers the pair from
  // the index alone, so the probe reads index entries only.
  if (first && last)
    return (await common(
      sql<SqlBool>`(${nameStartsWith('index', 'first_name', first)} and ${nameStartsWith('index', 'last_name', last)})`,
    ))
      ? 'scan'
      : 'index';
  return 'index';
}

/** The re-injection item states that mean the lead went out again (the filter reinjected). */
export const SENT_STATES = ['sent', 'delivered', 'refused'] as const;

/**
 * SQLite: the filters for leads that have a tracked link (autologin_opened) or went out in a
 * re-injection (reinjected=true) start from those rows when there are at most this many. Walking
 * the date index and probing each lead finds a page fast when such leads are common, but reads
 * every lead when they are rare or absent (about 8 s at 10,000,000 leads, on the one connection
 * intake also needs). Starting from the rows reads and sorts at most this many leads (about
 * 40 ms at 10,000,000 on a 2-core machine), and the walk past it meets at least one match in
 * every 2,000 leads on average.
 */
export const FEW_LINKED = 5000;

/** A set of lead ids that holds every lead a filter can match: the search's outer loop. */
export type Linked = 'opened' | 'tracked' | 'reinjected';

/** The lead ids of a linked set (with repeats: a lead may have several links or items). */
function linkedLeads(db: DB, set: Linked): SelectQueryBuilder<Database, never, { lead_id: string }> {
  if (set === 'reinjected')
    return db.selectFrom('injection_items').select('lead_id').where('state', 'in', SENT_STATES) as never;
  const links = db.selectFrom('autologin_links').select('lead_id');
  // opened: the partial index autologin_links_opened; tracked: autologin_links_lead.
  return (set === 'opened' ? links.where('opens', '>', 0) : links) as never;
}

/** Which linked set the search starts from, if any (SQLite only: PostgreSQL weighs it with its statistics). */
async function linkedDrive(db: DB, f: LeadFilter): Promise<Linked | null> {
  if (isPostgres(db)) return null;
  const sets: Linked[] = [];
  if (f.autologin_opened !== undefined) sets.push(f.autologin_opened ? 'opened' : 'tracked');
  if (f.reinjected) sets.push('reinjected');
  for (const set of sets) {
    if ((await countOf(db, linkedLeads(db, set).limit(FEW_LINKED + 1))) <= FEW_LINKED) return set;
  }
  return null;
}

/**
 * How a sub id is compared when no provider narrows the search. Its indexes are
 * (traffic_provider_id, sub_idN): with statistics SQLite skip-scans one for any value and then
 * sorts every match (a common sub_id1 value at 10,000,000 leads: over 10 s), without them it
 * walks every lead for a click id; PostgreSQL 15 has no skip scan and walked the date index for a
 * click id (372–680 ms at 10,000,000 leads, 3–4 ms led by provider: bench/RESULTS.md). A probe
 * decides, as for names: a rare value is looked up under each provider ('index'), a common one
 * walks the date index ('scan').
 */
export type SubIdMode = 'index' | 'scan';

/** Whether sub id lookups need a provider to lead the index with (no provider filter or scope). */
const providerLed = (db: DB, f: LeadFilter) => f.traffic_provider_id === undefined && !f.scope.trafficProviderIds;

/** Every provider's id: the leading column of the sub id indexes, so each is read as a seek per provider. */
export const everyProvider = (db: DB) => db.selectFrom('traffic_providers').select('traffic_providers.id');

async function subIdModes(db: DB, f: LeadFilter): Promise<Partial<Record<SubId, SubIdMode>>> {
  const modes: Partial<Record<SubId, SubIdMode>> = {};
  if (!providerLed(db, f)) return modes;
  for (const k of SUB_IDS) {
    const v = f.subIds[k];
    if (v === undefined) continue;
    const probe = db
      .selectFrom('leads')
      .select(sql`1`.as('one'))
      .where('leads.traffic_provider_id', 'in', everyProvider(db))
      .where(`leads.${k}`, '=', v)
      .limit(COMMON);
    modes[k] = (await countOf(db, probe)) >= COMMON ? 'scan' : 'index';
  }
  return modes;
}

/** How a search reads: its name mode, its sub ids' modes and the linked set it starts from. */
export interface Plan {
  mode: NameMode;
  subIds: Partial<Record<SubId, SubIdMode>>;
  drive: Linked | null;
  /** A count may read in no order: a name or sub id index is its walk (else the date order steers SQLite to the date index). */
  unordered: boolean;
}

/**
 * A page walks to its first `limit` matches in date order, so a common name or sub id is best
 * met by walking the date index. A count (up to its cap, or every match) and a job's selection
 * have no order: without a date range, reading the name or sub id index beats walking every
 * lead; within one, the walk is bounded by the range, where the index would read every match of
 * all time (a common last name within 30 days at 10,000,000 leads: 144 ms walked, 545 ms read).
 */
export async function planOf(db: DB, f: LeadFilter, purpose: 'page' | 'all'): Promise<Plan> {
  const named = !!f.q?.name || SUB_IDS.some((k) => f.subIds[k] !== undefined);
  if (purpose === 'all' && named && f.from === null && f.to === null) {
    const subIds: Plan['subIds'] = {};
    if (providerLed(db, f)) for (const k of SUB_IDS) if (f.subIds[k] !== undefined) subIds[k] = 'index';
    return { mode: isPostgres(db) ? 'postgres' : 'index', subIds, drive: await linkedDrive(db, f), unordered: true };
  }
  return {
    mode: f.q ? await nameMode(db, f.q) : 'index',
    subIds: await subIdModes(db, f),
    drive: await linkedDrive(db, f),
    unordered: false,
  };
}

/**
 * The leads table, or, when the search starts from a linked set, that set's distinct lead ids
 * CROSS JOIN leads: SQLite keeps the left side of a CROSS JOIN as the outer loop, so it reads
 * the set and looks each lead up by its primary key, then sorts (PostgreSQL plans it as a join).
 */
export function leadsFrom(db: DB, drive: Linked | null): SelectQueryBuilder<Database, 'leads', object> {
  if (!drive) return db.selectFrom('leads');
  const ids = linkedLeads(db, drive).distinct().as('x');
  return db.selectFrom(ids).crossJoin('leads').whereRef('leads.id', '=', 'x.lead_id') as unknown as SelectQueryBuilder<
    Database,
    'leads',
    object
  >;
}
