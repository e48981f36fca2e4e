// The SQL of analytics. Two sources, same answer shape:
//  - the hourly rollups (migration 20261122T010000Z_analytics_rollup), for whole UTC hours;
//  - the leads table itself, for the pieces of a range that do not cover a whole hour.
// Time buckets are cut from ISO text with substr(), which both engines evaluate alike; local
// days are made from them in TypeScript (service.ts), so the SQL needs no time zone support.
import { sql, type Expression, type RawBuilder, type SelectQueryBuilder } from 'kysely';
import type { DB } from '../../db/database.js';
import { isScoped, leadInScope, type DataScope } from '../../db/scope.js';
import { foldedLeadDays, readLeadDays } from './lead-folds.js';

export type EntityColumn = 'partner_id' | 'traffic_provider_id' | 'campaign_id' | 'flow_id' | 'country';

export interface Filters {
  partner_id?: string[];
  traffic_provider_id?: string[];
  campaign_id?: string[];
  flow_id?: string[];
  country?: string[];
}

export const HOUR_BUCKET = 3_600_000;
export const QUARTER_BUCKET = 900_000;
export const MINUTE_BUCKET = 60_000;
const DAY_MS = 86_400_000;

/** created_at: every measure; ftd_at: FTDs and their revenue only. */
export type DateColumn = 'created_at' | 'ftd_at';

interface Common {
  column: DateColumn;
  filters: Filters;
  /** Whose leads the reader sees (the rollups carry the provider and partner of each row). */
  scope: DataScope;
  entities: EntityColumn[];
  /** created_at only: count revenue of leads without an FTD alone (ftd mode takes the rest from ftd_at). */
  revenueWithoutFtd?: boolean;
}

export interface RollupSpec extends Common {
  /** Whole UTC hours [fromMs, toMs). */
  fromMs: number;
  toMs: number;
  /** Hours (their start, ms) inside the range to leave out: read from leads instead. */
  skipHours: number[];
  /**
   * Where the buckets (local days, weeks or months) start (ms, ascending, one more than there are
   * buckets; DayGrid.starts): the hours are summed per bucket in SQL, each row's bucket being its
   * start. Null: the whole range.
   */
  bucketStarts: number[] | null;
}

export interface RawSpec extends Common {
  /** Half-open intervals [from, to) in ms. */
  segments: [number, number][];
  /** Bucket size in ms (hour, quarter, minute), or null for no time grouping. */
  bucketMs: number | null;
}

/** The counts and sums every report cell carries. */
export interface Measures {
  leads: number;
  delivered: number;
  rejected: number;
  duplicates: number;
  failed: number;
  ftds: number;
  costCents: number;
  revenueCents: number;
  /** Leads with any fraud flag (leads.flags <> 0). */
  flagged: number;
}

export interface AggregateRow extends Measures {
  /** Start of the UTC bucket in ms; null without time grouping. */
  bucket: number | null;
  entities: (string | null)[];
}

const iso = (ms: number) => new Date(ms).toISOString();
const hourText = (ms: number) => iso(ms).slice(0, 13);
const num = (v: unknown) => Number(v ?? 0); // PostgreSQL answers count/sum as bigint text

/** "2026-11-21T10" or "2026-11-21T10:37" (+ quarter index) → epoch ms of the bucket start. */
export function bucketStart(text: string, quarter: number | null): number {
  const ms = Date.UTC(
    +text.slice(0, 4),
    +text.slice(5, 7) - 1,
    +text.slice(8, 10),
    +text.slice(11, 13),
    text.length > 13 ? +text.slice(14, 16) : 0,
  );
  return quarter === null ? ms : ms + quarter * QUARTER_BUCKET;
}

function applyFilters<Q extends SelectQueryBuilder<any, any, any>>(q: Q, filters: Filters): Q {
  for (const [column, values] of Object.entries(filters) as [EntityColumn, string[] | undefined][]) {
    if (values?.length) q = q.where(column, 'in', values) as Q;
  }
  return q;
}

function toRows(
  rows: Record<string, unknown>[],
  entities: EntityColumn[],
  bucketOf: (r: Record<string, unknown>) => number | null,
): AggregateRow[] {
  return rows.map((r) => ({
    bucket: bucketOf(r),
    // The rollups store a missing reference as ''.
    entities: entities.map((_, i) =>
      r[`e${i}`] === '' || r[`e${i}`] === undefined ? null : (r[`e${i}`] as string | null),
    ),
    leads: num(r.leads),
    delivered: num(r.delivered),
    rejected: num(r.rejected),
    duplicates: num(r.duplicates),
    failed: num(r.failed),
    ftds: num(r.ftds),
    costCents: num(r.cost),
    revenueCents: num(r.revenue),
    flagged: num(r.flagged),
  }));
}

/**
 * The rollup a read needs: by (hour, country) alone when it groups and filters by nothing else
 * (a seventh of the rows at scale: migration 20261125T050000Z_country_rollup), else the full one.
 */
function rollupTable(spec: RollupSpec): string {
  if (spec.column === 'ftd_at') return 'lead_ftd_stats_hourly';
  if (isScoped(spec.scope)) return 'lead_stats_hourly'; // the country rollup has no provider or partner
  const otherFilter = Object.entries(spec.filters).some(([column, values]) => column !== 'country' && values?.length);
  return !otherFilter && spec.entities.every((c) => c === 'country')
    ? 'lead_country_stats_hourly'
    : 'lead_stats_hourly';
}

const KEY_ORDER: EntityColumn[] = ['country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];

/** Each whole hour of [fromMs, toMs) but the skipped ones, with the index of the bucket holding it. */
function dayOfEachHour(
  fromMs: number,
  toMs: number,
  skip: Set<number>,
  starts: number[],
): [hour: number, bucket: number][] {
  const out: [number, number][] = [];
  let b = 0;
  for (let h = fromMs; h < toMs; h += HOUR_BUCKET) {
    while (b + 1 < starts.length && starts[b + 1] <= h) b++;
    if (!skip.has(h)) out.push([h, b]);
  }
  return out;
}

/**
 * The folded UTC days of [fromMs, toMs) that lie wholly inside one bucket, read from
 * lead_stats_daily with each row's bucket index as b0; `days` are the starts (ms) of those read,
 * whose hours the caller leaves out (a day unfolded meanwhile is not among them).
 */
async function readBucketDays(
  db: DB,
  fromMs: number,
  toMs: number,
  starts: number[],
  select: Parameters<typeof readLeadDays>[2],
): Promise<{ rows: Record<string, unknown>[]; days: number[] }> {
  const inside = new Map<string, number>();
  let b = 0;
  for (const day of await foldedLeadDays(db, fromMs, toMs)) {
    const start = Date.parse(`${day}T00:00:00.000Z`);
    while (b + 1 < starts.length && starts[b + 1] <= start) b++;
    if (starts[b] <= start && start + DAY_MS <= starts[b + 1]) inside.set(day, b);
  }
  if (!inside.size) return { rows: [], days: [] };
  // Literals, not parameters: PostgreSQL matches the GROUP BY to the SELECT by their text.
  const bucket = sql`case r.day ${sql.join(
    [...inside].map(([day, i]) => sql`when ${sql.lit(day)} then ${sql.lit(i)}`),
    sql` `,
  )} end`;
  const read = await readLeadDays(db, [...inside.keys()], {
    columns: [sql`${bucket} as b0`, ...select.columns],
    placeholders: [sql.raw('null as b0'), ...select.placeholders],
    where: select.where,
    groups: [bucket, ...select.groups],
  });
  for (const day of read.unfolded) inside.delete(day);
  return { rows: read.rows, days: [...inside.keys()].map((day) => Date.parse(`${day}T00:00:00.000Z`)) };
}

/** The volume measures as [alias, rollup column]; revenue's column depends on the report (volumeSums). */
function volumeSums(revenueWithoutFtd: boolean | undefined): [string, string][] {
  return [
    ['leads', 'n_leads'],
    ['delivered', 'n_delivered'],
    ['rejected', 'n_rejected'],
    ['duplicates', 'n_duplicate'],
    ['failed', 'n_failed'],
    ['ftds', 'n_ftd'],
    ['cost', 'cost_cents'],
    ['revenue', revenueWithoutFtd ? 'revenue_no_ftd_cents' : 'revenue_cents'],
    ['flagged', 'n_flagged'],
  ];
}

/** [fromMs, toMs) without the given UTC days: ascending hour-aligned intervals. */
function hoursAround(fromMs: number, toMs: number, days: string[]): [number, number][] {
  const out: [number, number][] = [];
  let at = fromMs;
  for (const d of days) {
    const start = Date.parse(`${d}T00:00:00.000Z`);
    if (start > at) out.push([at, start]);
    at = Math.max(at, start + 86_400_000);
  }
  if (at < toMs) out.push([at, toMs]);
  return out;
}

export async function aggregateRollup(db: DB, spec: RollupSpec): Promise<AggregateRow[]> {
  const volume = spec.column === 'created_at';
  const filtered: RawBuilder<unknown>[] = [];
  for (const [column, values] of Object.entries(spec.filters) as [EntityColumn, string[] | undefined][]) {
    if (values?.length) filtered.push(sql`${sql.ref(`r.${column}`)} in (${sql.join(values)})`);
  }
  const inScope = leadInScope(spec.scope, 'r');
  if (inScope) filtered.push(sql`${inScope}`);
  // The range stays in WHERE with days too: PostgreSQL then reads a short range by index.
  const where: RawBuilder<unknown>[] = [
    sql`r.hour >= ${hourText(spec.fromMs)}`,
    sql`r.hour < ${hourText(spec.toMs)}`,
    ...filtered,
  ];
  if (spec.skipHours.length && !spec.bucketStarts)
    where.push(sql`r.hour not in (${sql.join(spec.skipHours.map(hourText))})`);
  const sums = volume
    ? volumeSums(spec.revenueWithoutFtd)
    : [
        ['ftds', 'n_ftd'],
        ['revenue', 'revenue_cents'],
      ];
  const measures = sql.raw(sums.map(([alias, column]) => `sum(r.${column}) as ${alias}`).join(', '));
  const selections = [...spec.entities.map((c, i) => sql`${sql.ref(`r.${c}`)} as ${sql.ref(`e${i}`)}`), measures];
  // In the rollup's key order, so SQLite can group along its primary key without sorting.
  const groups = [...spec.entities]
    .sort((a, b) => KEY_ORDER.indexOf(a) - KEY_ORDER.indexOf(b))
    .map((c) => sql.ref(`r.${c}`));
  const table = sql.table(rollupTable(spec));
  let statement: RawBuilder<unknown>;
  let daily: Record<string, unknown>[] = [];
  if (spec.bucketStarts) {
    // Hours summed per bucket in SQL, so a few thousand (bucket, entity) rows cross into Node instead
    // of tens of thousands of (hour, entity) rows: each hour read is joined to its bucket by
    // equality, which both engines plan well (a range join made PostgreSQL compare every pair).
    // Folded UTC days inside one bucket (a week's or a month's) are read from the daily rollup.
    const skip = new Set(spec.skipHours);
    if (rollupTable(spec) === 'lead_stats_hourly') {
      const read = await readBucketDays(db, spec.fromMs, spec.toMs, spec.bucketStarts, {
        columns: selections,
        placeholders: [
          ...spec.entities.map((_, i) => sql.raw(`null as e${i}`)),
          ...sums.map(([alias]) => sql.raw(`0 as ${alias}`)),
        ],
        where: filtered,
        groups,
      });
      daily = read.rows;
      for (const day of read.days) for (let h = day; h < day + DAY_MS; h += HOUR_BUCKET) skip.add(h);
    }
    const hours = dayOfEachHour(spec.fromMs, spec.toMs, skip, spec.bucketStarts);
    if (!hours.length) return toRows(daily, spec.entities, (r) => spec.bucketStarts![num(r.b0)]);
    const d = sql.join(hours.map(([hour, b]) => sql`(${hourText(hour)}, ${sql.lit(b)})`));
    statement = sql`with d (hour, b) as (values ${d}) select d.b as b0, ${sql.join(selections)} from d join ${table} r on r.hour = d.hour where ${sql.join(where, sql` and `)} group by ${sql.join([sql`d.b`, ...groups])}`;
  } else {
    if (rollupTable(spec) === 'lead_stats_hourly' && !spec.skipHours.length) {
      // Whole UTC days folded into lead_stats_daily are read from it; the hours around them here.
      const days = await foldedLeadDays(db, spec.fromMs, spec.toMs);
      if (days.length) {
        const read = await readLeadDays(db, days, {
          columns: selections,
          placeholders: [
            ...spec.entities.map((_, i) => sql.raw(`null as e${i}`)),
            ...sums.map(([alias]) => sql.raw(`0 as ${alias}`)),
          ],
          where: filtered,
          groups,
        });
        daily = read.rows;
        const unfolded = new Set(read.unfolded);
        const hours = hoursAround(
          spec.fromMs,
          spec.toMs,
          days.filter((d) => !unfolded.has(d)),
        );
        if (!hours.length) where.splice(0, where.length, sql`1 = 0`);
        else
          where.splice(
            0,
            2,
            sql`(${sql.join(
              hours.map(([a, b]) => sql`(r.hour >= ${hourText(a)} and r.hour < ${hourText(b)})`),
              sql` or `,
            )})`,
          );
      }
    }
    statement = sql`select ${sql.join(selections)} from ${table} r where ${sql.join(where, sql` and `)}${groups.length ? sql` group by ${sql.join(groups)}` : sql``}`;
  }
  const rows = [...daily, ...((await statement.execute(db)).rows as Record<string, unknown>[])];
  const grouped = spec.bucketStarts !== null || groups.length > 0;
  // Without grouping, SQL answers one row even over nothing.
  return toRows(grouped ? rows : rows.filter((r) => r.leads !== null || r.ftds !== null), spec.entities, (r) =>
    spec.bucketStarts ? spec.bucketStarts[num(r.b0)] : null,
  );
}

/** The SELECT (and GROUP BY) expressions that cut `column` into UTC buckets of `bucketMs`; bucketStart reads them back. */
export function bucketSelections(column: DateColumn | 'delivered_at', bucketMs: number | null): RawBuilder<unknown>[] {
  const col = sql.ref(column);
  // Literal numbers stay in the SQL text: PostgreSQL matches GROUP BY expressions to the
  // select list by text, and bound parameters would make them differ.
  if (bucketMs === null) return [];
  if (bucketMs === HOUR_BUCKET) return [sql<string>`substr(${col}, 1, 13)`];
  if (bucketMs === QUARTER_BUCKET)
    return [sql<string>`substr(${col}, 1, 13)`, sql<number>`cast(substr(${col}, 15, 2) as integer) / 15`];
  return [sql<string>`substr(${col}, 1, 16)`];
}

const SEGMENTS_PER_QUERY = 100; // keeps the OR list well inside SQLite's expression depth limit

export async function aggregateRaw(db: DB, spec: RawSpec): Promise<AggregateRow[]> {
  const out: AggregateRow[] = [];
  for (let i = 0; i < spec.segments.length; i += SEGMENTS_PER_QUERY) {
    out.push(...(await aggregateRawChunk(db, spec, spec.segments.slice(i, i + SEGMENTS_PER_QUERY))));
  }
  return out;
}

async function aggregateRawChunk(db: DB, spec: RawSpec, segments: [number, number][]): Promise<AggregateRow[]> {
  const buckets = bucketSelections(spec.column, spec.bucketMs);
  const volume = spec.column === 'created_at';
  let q: SelectQueryBuilder<any, any, any> = db
    .selectFrom('leads')
    .where((eb) =>
      eb.or(segments.map(([from, to]) => eb.and([eb(spec.column, '>=', iso(from)), eb(spec.column, '<', iso(to))]))),
    )
    .select(buckets.map((b, i) => b.as(`b${i}`)))
    .select(spec.entities.map((c, i) => sql.ref(c).as(`e${i}`)));
  q = volume
    ? q.select([
        sql<number>`count(*)`.as('leads'),
        sql<number>`sum(case when status = 'delivered' then 1 else 0 end)`.as('delivered'),
        sql<number>`sum(case when status = 'rejected' then 1 else 0 end)`.as('rejected'),
        sql<number>`sum(case when status = 'duplicate' then 1 else 0 end)`.as('duplicates'),
        sql<number>`sum(case when status = 'failed' then 1 else 0 end)`.as('failed'),
        sql<number>`count(ftd_at)`.as('ftds'),
        sql<number>`sum(cost_cents)`.as('cost'),
        (spec.revenueWithoutFtd
          ? sql<number>`sum(case when ftd_at is null then revenue_cents else 0 end)`
          : sql<number>`sum(revenue_cents)`
        ).as('revenue'),
        sql<number>`sum(case when flags <> 0 then 1 else 0 end)`.as('flagged'),
      ])
    : q.select([sql<number>`count(*)`.as('ftds'), sql<number>`sum(revenue_cents)`.as('revenue')]);
  q = applyFilters(q, spec.filters);
  const inScope = leadInScope(spec.scope);
  if (inScope) q = q.where(inScope);
  const groups: Expression<unknown>[] = [...buckets, ...spec.entities.map((c) => sql.ref(c))];
  if (groups.length) q = q.groupBy(groups);
  const rows = (await q.execute()) as Record<string, unknown>[];
  const counted = groups.length ? rows : rows.filter((r) => num(r.leads) > 0 || num(r.ftds) > 0);
  return toRows(counted, spec.entities, (r) =>
    buckets.length ? bucketStart(String(r.b0), buckets.length > 1 ? num(r.b1) : null) : null,
  );
}

const NAME_TABLES = {
  partner_id: 'partners',
  traffic_provider_id: 'traffic_providers',
  campaign_id: 'campaigns',
  flow_id: 'flows',
} as const;

/** Names of the entities a report shows, archived ones included. */
export async function entityNames(
  db: DB,
  column: keyof typeof NAME_TABLES,
  ids: string[],
): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = await db.selectFrom(NAME_TABLES[column]).select(['id', 'name']).where('id', 'in', chunk).execute();
    for (const r of rows) names.set(r.id, r.name);
  }
  return names;
}
