// The leads report's UTC days (migration 20261209T010000Z_lead_daily_rollup): lead_stats_hourly
// summed by day into lead_stats_daily once a day has ended, and read back for the whole UTC days
// of a range. A day is read from it only while its lead_stats_folds row exists; the triggers
// (db/triggers/lead-folds.ts) delete it, with the day's rows, on any change to the day's hourly
// rows, and the hourly rows answer for that day until the next run folds it again.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres, lockingTransaction, type DB } from '../../db/database.js';
import { LEAD_DAY_LOCK } from '../../db/triggers/lead-folds.js';
import { VOLUME } from '../../db/triggers/rollups.js';
import { FOLD_AFTER_MS, type FoldOptions, type FoldRun } from './attempt-folds.js';
import { splitFolded } from './attempt-rollups.js';

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();
const dayText = (ms: number) => iso(ms).slice(0, 10);

const KEY = ['country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];

/** Folds one ended UTC day ('YYYY-MM-DD') from its hourly rows, in one transaction. */
export async function foldLeadDay(db: DB, day: string, nowMs = Date.now()): Promise<void> {
  const next = dayText(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS);
  await lockingTransaction(db, async (trx) => {
    const tx = trx as unknown as Kysely<any>;
    // Waits for the writers of the day in flight; those that come meanwhile wait for this.
    if (isPostgres(db)) await sql`select pg_advisory_xact_lock(${LEAD_DAY_LOCK}, hashtext(${day}))`.execute(tx);
    await tx.deleteFrom('lead_stats_folds').where('day', '=', day).execute();
    await tx.deleteFrom('lead_stats_daily').where('day', '=', day).execute();
    const keys = KEY.join(', ');
    await sql`insert into lead_stats_daily (day, ${sql.raw(keys)}, ${sql.raw(VOLUME.join(', '))})
      select ${day}, ${sql.raw(keys)}, ${sql.raw(VOLUME.map((m) => `sum(${m})`).join(', '))}
      from lead_stats_hourly where hour >= ${day} and hour < ${next} group by ${sql.raw(keys)}`.execute(tx);
    await tx
      .insertInto('lead_stats_folds')
      .values({ day, folded_at: iso(nowMs) })
      .execute();
  });
}

/** Folds every ended UTC day not folded yet (FOLD_AFTER_MS after its end), newest first. */
export async function foldLeadDays(db: DB, opts: FoldOptions = {}): Promise<FoldRun> {
  const nowMs = opts.nowMs ?? Date.now();
  const started = Date.now();
  const k = db as unknown as Kysely<any>;
  const first = (
    await k
      .selectFrom('lead_stats_hourly')
      .select((eb) => eb.fn.min('hour').as('h'))
      .executeTakeFirst()
  )?.h as string | null | undefined;
  if (!first) return { hours: 0, days: 0, pending: 0 };
  const folded = new Set((await k.selectFrom('lead_stats_folds').select('day').execute()).map((r) => r.day as string));
  const firstMs = Date.parse(`${first.slice(0, 10)}T00:00:00.000Z`);
  const due: string[] = [];
  for (let ms = Math.floor((nowMs - FOLD_AFTER_MS) / DAY_MS) * DAY_MS - DAY_MS; ms >= firstMs; ms -= DAY_MS) {
    if (!folded.has(dayText(ms))) due.push(dayText(ms));
  }
  const run: FoldRun = { hours: 0, days: 0, pending: 0 };
  let last = 0;
  for (const [i, day] of due.entries()) {
    if (opts.signal?.aborted || (opts.budgetMs !== undefined && Date.now() - started > opts.budgetMs)) {
      run.pending = due.length - i;
      break;
    }
    await opts.rest?.(last);
    const t = Date.now();
    await foldLeadDay(db, day, nowMs);
    last = Date.now() - t;
    run.days++;
    opts.onProgress?.(run.days, due.length);
  }
  return run;
}

/** The whole UTC days of [fromMs, toMs) (whole hours) folded now, ascending. */
export async function foldedLeadDays(db: DB, fromMs: number, toMs: number): Promise<string[]> {
  const first = Math.ceil(fromMs / DAY_MS) * DAY_MS;
  const end = Math.floor(toMs / DAY_MS) * DAY_MS;
  if (first >= end) return [];
  const rows = await (db as unknown as Kysely<any>)
    .selectFrom('lead_stats_folds')
    .select('day')
    .where('day', '>=', dayText(first))
    .where('day', '<', dayText(end))
    .orderBy('day')
    .execute();
  return rows.map((r) => r.day as string);
}

/**
 * The days' rows of lead_stats_daily (`r`), grouped as the caller says, in one statement with the
 * list of those days still folded: days planned but unfolded meanwhile come back in `unfolded`,
 * for the caller to read from the hourly rows.
 */
export async function readLeadDays(
  db: DB,
  days: string[],
  select: {
    columns: RawBuilder<unknown>[];
    placeholders: RawBuilder<unknown>[];
    where: RawBuilder<unknown>[];
    groups: RawBuilder<unknown>[];
  },
): Promise<{ rows: Record<string, unknown>[]; unfolded: string[] }> {
  const list = sql.join(days.map((d) => sql`${d}`));
  const where = [sql`r.day in (${list})`, ...select.where];
  const result = await sql<Record<string, unknown>>`
    select null as folded, ${sql.join(select.columns)}
    from lead_stats_daily r join lead_stats_folds f on f.day = r.day
    where ${sql.join(where, sql` and `)}
    ${select.groups.length ? sql`group by ${sql.join(select.groups)}` : sql``}
    union all
    select f.day, ${sql.join(select.placeholders)} from lead_stats_folds f where f.day in (${list})`.execute(
    db as unknown as Kysely<any>,
  );
  return splitFolded(result.rows, days);
}
