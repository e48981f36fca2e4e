// Partner performance's read of the folded buckets (attempt-folds.ts): which whole UTC days and
// hours of a range are folded, their sums in one statement each, and what is left for the
// attempts themselves (the range's edges, hours not folded yet, and any bucket unfolded between
// the plan and the read).
import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { DB } from '../../db/database.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import { ALL_PROVIDERS, bucketStartMs, dayBucket, hourBucket } from './attempt-folds.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** Half-open intervals [from, to) in ms, ascending. */
export type Segments = [number, number][];

export interface FoldPlan {
  days: string[];
  hours: string[];
  /** What the folds do not cover: read from the attempts. */
  raw: Segments;
}

/** Adds [from, to) to ascending segments, joined to the last one when they touch. */
function push(segments: Segments, from: number, to: number) {
  const last = segments.at(-1);
  if (last && last[1] === from) last[1] = to;
  else segments.push([from, to]);
}

/** Whole UTC days (when folded) and hours (when folded) of [fromMs, toMs); the rest raw. */
export async function planFolds(db: DB, fromMs: number, toMs: number): Promise<FoldPlan> {
  const plan: FoldPlan = { days: [], hours: [], raw: [] };
  const firstHour = Math.ceil(fromMs / HOUR_MS) * HOUR_MS;
  const endHour = Math.floor(toMs / HOUR_MS) * HOUR_MS;
  if (firstHour >= endHour) {
    plan.raw.push([fromMs, toMs]);
    return plan;
  }
  const folded = new Set(
    (
      await (db as unknown as Kysely<any>)
        .selectFrom('attempt_folds')
        .select('bucket')
        .where('bucket', '>=', dayBucket(firstHour))
        .where('bucket', '<=', hourBucket(endHour))
        .execute()
    ).map((r) => r.bucket as string),
  );
  if (fromMs < firstHour) push(plan.raw, fromMs, firstHour);
  for (let ms = firstHour; ms < endHour;) {
    if (ms % DAY_MS === 0 && ms + DAY_MS <= endHour && folded.has(dayBucket(ms))) {
      plan.days.push(dayBucket(ms));
      ms += DAY_MS;
    } else {
      if (folded.has(hourBucket(ms))) plan.hours.push(hourBucket(ms));
      else push(plan.raw, ms, ms + HOUR_MS);
      ms += HOUR_MS;
    }
  }
  if (endHour < toMs) push(plan.raw, endHour, toMs);
  return plan;
}

/** Adds the buckets' intervals to `raw` (ascending, joined), for buckets the read found unfolded. */
export function withBuckets(raw: Segments, buckets: string[]): Segments {
  const all: Segments = [
    ...raw.map(([a, b]) => [a, b] as [number, number]),
    ...buckets.map((b) => {
      const from = bucketStartMs(b);
      return [from, from + (b.length === 10 ? DAY_MS : HOUR_MS)] as [number, number];
    }),
  ].sort((x, y) => x[0] - y[0]);
  const out: Segments = [];
  for (const [a, b] of all) push(out, a, b);
  return out;
}

/**
 * A read's rows apart from its marker rows (`folded`: a bucket whose fold was still there when the
 * statement ran), and the planned buckets without one, for the caller to read from finer rows.
 */
export function splitFolded(
  result: Record<string, unknown>[],
  planned: string[],
): { rows: Record<string, unknown>[]; unfolded: string[] } {
  const found = new Set<string>();
  const rows: Record<string, unknown>[] = [];
  for (const r of result) {
    if (r.folded === null || r.folded === undefined) rows.push(r);
    else found.add(String(r.folded));
  }
  return { rows, unfolded: planned.filter((b) => !found.has(b)) };
}

export interface FoldedFilters {
  partnerIds?: string[];
  trafficProviderIds?: string[];
  scope: DataScope;
}

const list = (values: string[]) => sql.join(values.map((v) => sql`${v}`));

/** byProvider: the rows of each provider; else each partner's rows over every provider (ALL_PROVIDERS). */
function conditions(f: FoldedFilters, byProvider: boolean): Expression<SqlBool>[] {
  const out: Expression<SqlBool>[] = [];
  out.push(
    byProvider || f.trafficProviderIds?.length || f.scope.trafficProviderIds
      ? sql<SqlBool>`s.traffic_provider_id <> ${ALL_PROVIDERS}`
      : sql<SqlBool>`s.traffic_provider_id = ${ALL_PROVIDERS}`,
  );
  if (f.partnerIds?.length) out.push(sql<SqlBool>`s.partner_id in (${list(f.partnerIds)})`);
  if (f.trafficProviderIds?.length) out.push(sql<SqlBool>`s.traffic_provider_id in (${list(f.trafficProviderIds)})`);
  const scoped = leadInScope(f.scope, 's');
  if (scoped) out.push(scoped);
  return out;
}

/**
 * Sums of `columns` from the folded rows of `table` (`attempt_stats` or `attempt_reasons`) in the
 * plan's days and hours, grouped by `groupBy`, in one statement with the list of those buckets
 * still folded (one snapshot on both engines): buckets planned but no longer folded come back in
 * `unfolded`, for the caller to read from the attempts.
 */
export async function readFolded(
  db: DB,
  table: 'attempt_stats' | 'attempt_reasons',
  plan: FoldPlan,
  filters: FoldedFilters,
  select: { groupBy: RawBuilder<unknown>[]; sums: string[]; byProvider: boolean },
): Promise<{ rows: Record<string, unknown>[]; unfolded: string[] }> {
  const planned = [...plan.days, ...plan.hours];
  if (!planned.length) return { rows: [], unfolded: [] };
  const parts: RawBuilder<unknown>[] = [];
  if (plan.days.length)
    parts.push(sql`select * from ${sql.raw(`${table}_daily`)} where bucket in (${list(plan.days)})`);
  if (plan.hours.length)
    parts.push(sql`select * from ${sql.raw(`${table}_hourly`)} where bucket in (${list(plan.hours)})`);
  const where = conditions(filters, select.byProvider);
  const groups = select.groupBy.map((g, i) => sql`${g} as ${sql.raw(`g${i}`)}`);
  const nulls = select.groupBy.map((_, i) => sql.raw(`null as g${i}`));
  const sums = select.sums.map((c) => sql.raw(`sum(s.${c}) as ${c}`));
  const zeros = select.sums.map((c) => sql.raw(`0 as ${c}`));
  const result = await sql<Record<string, unknown>>`
    select null as folded, ${sql.join([...groups, ...sums])}
    from (${sql.join(parts, sql` union all `)}) s join attempt_folds f on f.bucket = s.bucket
    ${where.length ? sql`where ${sql.join(where, sql` and `)}` : sql``}
    group by ${sql.join(select.groupBy)}
    union all
    select f.bucket, ${sql.join([...nulls, ...zeros])} from attempt_folds f where f.bucket in (${list(planned)})`.execute(
    db as unknown as Kysely<any>,
  );
  return splitFolded(result.rows, planned);
}
