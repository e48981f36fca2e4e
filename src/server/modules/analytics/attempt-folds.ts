// Folding delivery attempts and tracked links into the rollups partner performance reads
// (migration 20261209T000000Z_attempt_rollups): an hour at a time once it has closed, then a UTC
// day once its 24 hours are folded. A bucket is read from the rollups only while its row in
// attempt_folds exists; the triggers (db/triggers/attempt-folds.ts) delete it, and its rows, on
// any change to an attempt or link in it, so the rollups never serve a stale count: that hour is
// read from the attempts until the next run folds it again.
//
// Reasons are folded as the report shows them (contactPlaceholders), which SQL cannot do on
// SQLite: the hour's raw reasons are grouped in SQL and merged here.
import { sql, type Kysely } from 'kysely';
import { isPostgres, lockingTransaction, type DB } from '../../db/database.js';
import { contactPlaceholders } from '../../privacy/mask.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/**
 * An hour is folded once it ended this long ago: a call still in flight then (a partner's answer
 * takes seconds) unfolds it when it finishes. A process whose clock is further behind than this
 * could add a call to a folded hour unseen on PostgreSQL (an insert locks no row the fold reads).
 */
export const FOLD_AFTER_MS = 15 * 60_000;

const iso = (ms: number) => new Date(ms).toISOString();
export const hourBucket = (ms: number) => iso(ms).slice(0, 13);
export const dayBucket = (ms: number) => iso(ms).slice(0, 10);
export const bucketStartMs = (bucket: string) =>
  Date.parse(bucket.length === 10 ? `${bucket}T00:00:00.000Z` : `${bucket}:00:00.000Z`);
export const hoursOfDay = (day: string) => Array.from({ length: 24 }, (_, h) => `${day}T${String(h).padStart(2, '0')}`);

/** A refusal or failure as the report shows it: contacts as placeholders, a missing reason named. */
export const reasonText = (reason: unknown, outcome: unknown) =>
  contactPlaceholders(String(reason ?? (outcome === 'timeout' ? 'no answer in time' : 'call failed')));

/** fresh: a call for new traffic; reinjected: a re-injection job's call. */
export const ATTEMPT_ORIGIN = sql`case when a.injection_id is null then 'fresh' else 'reinjected' end`;
/** A tracked link is re-injected when a job's call was the one its partner took the lead on. */
export const LINK_ORIGIN = sql`case when exists (select 1 from lead_attempts x where x.lead_id = k.lead_id and x.partner_id = k.partner_id and x.outcome = 'accepted' and x.injection_id is not null) then 'reinjected' else 'fresh' end`;

const KEY = ['bucket', 'traffic_provider_id', 'partner_id', 'origin'];
const REASON_KEY = ['bucket', 'traffic_provider_id', 'partner_id', 'reason'];
/** The provider id of a partner's rows over every provider (no provider has it). */
export const ALL_PROVIDERS = '';
/** The sums attempt_stats_* hold. */
export const ATTEMPT_MEASURES = [
  'attempts',
  'accepted',
  'rejected',
  'failed',
  'duration_sum',
  'timed',
  'links',
  'opened',
];

/** Takes hours ('YYYY-MM-DDTHH') and their days out of the folds: their markers and their rows. */
async function unfoldRows(tx: Kysely<any>, hours: string[]) {
  const days = [...new Set(hours.map((h) => h.slice(0, 10)))];
  await tx
    .deleteFrom('attempt_folds')
    .where('bucket', 'in', [...hours, ...days])
    .execute();
  for (const [buckets, grain] of [
    [hours, 'hourly'],
    [days, 'daily'],
  ] as const) {
    await tx.deleteFrom(`attempt_stats_${grain}`).where('bucket', 'in', buckets).execute();
    await tx.deleteFrom(`attempt_reasons_${grain}`).where('bucket', 'in', buckets).execute();
  }
}

/** Folds one closed UTC hour ('YYYY-MM-DDTHH'), in one transaction; its day is unfolded with it. */
export async function foldHour(db: DB, hour: string, nowMs = Date.now()): Promise<void> {
  const from = iso(bucketStartMs(hour));
  const to = iso(bucketStartMs(hour) + HOUR_MS);
  await lockingTransaction(db, async (trx) => {
    const tx = trx as unknown as Kysely<any>;
    if (isPostgres(db)) {
      // The hour's calls and links hold still until this commits: a change to one waits, and its
      // trigger then finds this fold and takes it away. Taken before anything is written, so a
      // writer never waits here while holding what this needs. Their leads are not locked (status
      // pulls and conversions update old leads all day): the one lead column read, its provider,
      // never changes, and its trigger (lead_fold_provider) is exact unless it races a fold.
      await sql`select count(*) from (select a.id from lead_attempts a join leads l on l.id = a.lead_id where a.requested_at >= ${from} and a.requested_at < ${to} for share of a) x`.execute(
        tx,
      );
      await sql`select count(*) from (select k.token_hash from autologin_links k join leads l on l.id = k.lead_id where k.created_at >= ${from} and k.created_at < ${to} for share of k) x`.execute(
        tx,
      );
    }
    await unfoldRows(tx, [hour]);
    const stats = ATTEMPT_MEASURES.join(', ');
    await sql`insert into attempt_stats_hourly (${sql.raw(KEY.join(', '))}, ${sql.raw(stats)})
      select ${hour}, l.traffic_provider_id, a.partner_id, ${ATTEMPT_ORIGIN},
        count(*),
        sum(case when a.outcome = 'accepted' then 1 else 0 end),
        sum(case when a.outcome = 'rejected' then 1 else 0 end),
        sum(case when a.outcome in ('timeout', 'error') then 1 else 0 end),
        coalesce(sum(a.duration_ms), 0), count(a.duration_ms), 0, 0
      from lead_attempts a join leads l on l.id = a.lead_id
      where a.requested_at >= ${from} and a.requested_at < ${to} and a.outcome <> 'in_flight'
      group by a.partner_id, l.traffic_provider_id, ${ATTEMPT_ORIGIN}`.execute(tx);
    await sql`insert into attempt_stats_hourly (${sql.raw(KEY.join(', '))}, ${sql.raw(stats)})
      select ${hour}, l.traffic_provider_id, k.partner_id, ${LINK_ORIGIN}, 0, 0, 0, 0, 0, 0,
        count(*), sum(case when k.opens > 0 then 1 else 0 end)
      from autologin_links k join leads l on l.id = k.lead_id
      where k.created_at >= ${from} and k.created_at < ${to}
      group by k.partner_id, l.traffic_provider_id, ${LINK_ORIGIN}
      on conflict (${sql.raw(KEY.join(', '))}) do update set links = excluded.links, opened = excluded.opened`.execute(
      tx,
    );
    const sums = ATTEMPT_MEASURES.map((m) => `sum(${m})`).join(', ');
    await sql`insert into attempt_stats_hourly (${sql.raw(KEY.join(', '))}, ${sql.raw(stats)})
      select bucket, ${ALL_PROVIDERS}, partner_id, origin, ${sql.raw(sums)} from attempt_stats_hourly
      where bucket = ${hour} group by bucket, partner_id, origin`.execute(tx);
    const raw = await sql<{ p: string; t: string; reason: string | null; outcome: string; n: unknown }>`
      select a.partner_id as p, l.traffic_provider_id as t, a.reason, a.outcome, count(*) as n
      from lead_attempts a join leads l on l.id = a.lead_id
      where a.requested_at >= ${from} and a.requested_at < ${to} and a.outcome in ('rejected', 'timeout', 'error')
      group by a.partner_id, l.traffic_provider_id, a.reason, a.outcome`.execute(tx);
    const reasons = new Map<string, { partner_id: string; traffic_provider_id: string; reason: string; n: number }>();
    for (const r of raw.rows) {
      const reason = reasonText(r.reason, r.outcome);
      const key = JSON.stringify([r.p, r.t, reason]);
      const row = reasons.get(key);
      if (row) row.n += Number(r.n);
      else reasons.set(key, { partner_id: r.p, traffic_provider_id: r.t, reason, n: Number(r.n) });
    }
    // Each partner over every provider too, under provider '' (attempt-rollups.ts reads those alone when it can).
    for (const r of [...reasons.values()]) {
      const key = JSON.stringify([r.partner_id, ALL_PROVIDERS, r.reason]);
      const row = reasons.get(key);
      if (row) row.n += r.n;
      else reasons.set(key, { ...r, traffic_provider_id: ALL_PROVIDERS });
    }
    const rows = [...reasons.values()].map((r) => ({ bucket: hour, ...r }));
    // 5 parameters a row: well under either engine's limit per statement.
    for (let i = 0; i < rows.length; i += 500) {
      await tx
        .insertInto('attempt_reasons_hourly')
        .values(rows.slice(i, i + 500))
        .execute();
    }
    await tx
      .insertInto('attempt_folds')
      .values({ bucket: hour, folded_at: iso(nowMs) })
      .execute();
  });
}

/**
 * The hours of `hours` (one UTC day's) that hold a call or a link. `lock` (PostgreSQL, in a
 * transaction): their calls and links hold still until it commits, as in foldHour.
 */
async function hoursHolding(db: Kysely<any>, hours: string[], lock = false): Promise<Set<string>> {
  const from = iso(bucketStartMs(hours.reduce((a, b) => (a < b ? a : b))));
  const to = iso(bucketStartMs(hours.reduce((a, b) => (a > b ? a : b))) + HOUR_MS);
  const share = lock ? sql` for share` : sql``;
  const { rows } = await sql<{ h: string }>`
    select substr(x.at, 1, 13) as h from (
      select a.requested_at as at from lead_attempts a where a.requested_at >= ${from} and a.requested_at < ${to}${share}
    ) x
    union select substr(y.at, 1, 13) from (
      select k.created_at as at from autologin_links k where k.created_at >= ${from} and k.created_at < ${to}${share}
    ) y`.execute(db);
  return new Set(rows.map((r) => r.h));
}

/**
 * Folds hours with no call and no link in one transaction (a sparse history: a fresh install's
 * demo data over two years, say): their folds are only the markers, so one statement writes them
 * all instead of a transaction of a dozen statements each. The hours are checked again under the
 * lock foldHour takes; those that hold something after all are returned, not folded (the caller
 * folds them one by one).
 */
export async function foldEmptyHours(db: DB, hours: string[], nowMs = Date.now()): Promise<string[]> {
  if (!hours.length) return [];
  return lockingTransaction(db, async (trx) => {
    const tx = trx as unknown as Kysely<any>;
    const busy = await hoursHolding(tx, hours, isPostgres(db));
    const empty = hours.filter((h) => !busy.has(h));
    if (empty.length) {
      await unfoldRows(tx, empty);
      await tx
        .insertInto('attempt_folds')
        .values(empty.map((bucket) => ({ bucket, folded_at: iso(nowMs) })))
        .execute();
    }
    return hours.filter((h) => busy.has(h));
  });
}

/** Folds one UTC day from its 24 folded hours; false (nothing written) when one is not folded. */
export async function foldDay(db: DB, day: string, nowMs = Date.now()): Promise<boolean> {
  const hours = hoursOfDay(day);
  return lockingTransaction(db, async (trx) => {
    const tx = trx as unknown as Kysely<any>;
    const list = sql.join(hours.map((h) => sql`${h}`));
    // FOR SHARE on PostgreSQL: an hour unfolded meanwhile waits for this, then finds the day folded.
    const lock = isPostgres(db) ? sql` for share` : sql``;
    const held = await sql<{
      bucket: string;
    }>`select bucket from attempt_folds where bucket in (${list})${lock}`.execute(tx);
    if (held.rows.length !== 24) return false;
    await tx.deleteFrom('attempt_folds').where('bucket', '=', day).execute();
    await tx.deleteFrom('attempt_stats_daily').where('bucket', '=', day).execute();
    await tx.deleteFrom('attempt_reasons_daily').where('bucket', '=', day).execute();
    const sums = ATTEMPT_MEASURES.map((m) => `sum(${m})`).join(', ');
    await sql`insert into attempt_stats_daily (${sql.raw(KEY.join(', '))}, ${sql.raw(ATTEMPT_MEASURES.join(', '))})
      select ${day}, traffic_provider_id, partner_id, origin, ${sql.raw(sums)} from attempt_stats_hourly
      where bucket in (${list}) group by partner_id, traffic_provider_id, origin`.execute(tx);
    await sql`insert into attempt_reasons_daily (${sql.raw(REASON_KEY.join(', '))}, n)
      select ${day}, traffic_provider_id, partner_id, reason, sum(n) from attempt_reasons_hourly
      where bucket in (${list}) group by partner_id, traffic_provider_id, reason`.execute(tx);
    await tx
      .insertInto('attempt_folds')
      .values({ bucket: day, folded_at: iso(nowMs) })
      .execute();
    return true;
  });
}

export interface FoldRun {
  hours: number;
  days: number;
  /** Closed hours still to fold when the run stopped (its budget). */
  pending: number;
}

export interface FoldOptions {
  nowMs?: number;
  /** Stop starting new folds after this long (the next run goes on). */
  budgetMs?: number;
  /** Before each fold: let live requests go first (http/live-requests.ts); given the last fold's ms. */
  rest?: (lastMs: number) => Promise<void>;
  onProgress?: (done: number, total: number) => void;
  /** Shutdown: stop between folds. */
  signal?: AbortSignal;
}

/**
 * Folds every closed hour not folded yet, newest first (the reports of recent weeks gain first),
 * from the UTC day of the oldest call or link, then every day whose hours are all folded.
 */
export async function foldDue(db: DB, opts: FoldOptions = {}): Promise<FoldRun> {
  const nowMs = opts.nowMs ?? Date.now();
  const started = Date.now();
  const k = db as unknown as Kysely<any>;
  const oldest = await Promise.all([
    k
      .selectFrom('lead_attempts')
      .select((eb) => eb.fn.min('requested_at').as('at'))
      .executeTakeFirst(),
    k
      .selectFrom('autologin_links')
      .select((eb) => eb.fn.min('created_at').as('at'))
      .executeTakeFirst(),
  ]);
  const firsts = oldest.map((r) => r?.at).filter((at): at is string => typeof at === 'string');
  if (!firsts.length) return { hours: 0, days: 0, pending: 0 };
  const firstDayMs = bucketStartMs(dayBucket(Date.parse(firsts.sort()[0])));
  // The last hour that ended FOLD_AFTER_MS ago or more.
  const lastHourMs = Math.floor((nowMs - FOLD_AFTER_MS) / HOUR_MS) * HOUR_MS - HOUR_MS;
  const folded = new Set(
    (await k.selectFrom('attempt_folds').select('bucket').execute()).map((r) => r.bucket as string),
  );
  const due: string[] = [];
  for (let ms = lastHourMs; ms >= firstDayMs; ms -= HOUR_MS) {
    const hour = hourBucket(ms);
    if (!folded.has(hour)) due.push(hour);
  }
  const days: string[] = [];
  for (let ms = bucketStartMs(dayBucket(lastHourMs + HOUR_MS)) - DAY_MS; ms >= firstDayMs; ms -= DAY_MS) {
    if (!folded.has(dayBucket(ms))) days.push(dayBucket(ms));
  }
  const total = due.length + days.length;
  const run: FoldRun = { hours: 0, days: 0, pending: 0 };
  const outOfTime = () =>
    opts.signal?.aborted === true || (opts.budgetMs !== undefined && Date.now() - started > opts.budgetMs);
  let last = 0;
  // A day's due hours at a time (newest first, as listed): its empty hours in one transaction,
  // the others one by one. A run that finds one or two hours due (the job's every run) folds them
  // without the probe.
  byDay: for (let i = 0; i < due.length;) {
    const day = due[i].slice(0, 10);
    let end = i;
    while (end < due.length && due[end].startsWith(day)) end++;
    let left = due.slice(i, end);
    if (left.length > 2) {
      // A hint read without a lock: a full day takes no write lock here.
      const withData = await hoursHolding(db as unknown as Kysely<any>, left);
      const empty = left.filter((h) => !withData.has(h));
      if (empty.length > 1) {
        if (outOfTime()) break byDay;
        await opts.rest?.(last);
        const t = Date.now();
        const busy = new Set(await foldEmptyHours(db, empty, nowMs));
        last = Date.now() - t;
        for (const h of empty) if (!busy.has(h)) folded.add(h);
        run.hours += empty.length - busy.size;
        opts.onProgress?.(run.hours, total);
        left = left.filter((h) => !folded.has(h));
      }
    }
    for (const hour of left) {
      if (outOfTime()) break byDay;
      await opts.rest?.(last);
      const t = Date.now();
      await foldHour(db, hour, nowMs);
      last = Date.now() - t;
      folded.add(hour);
      run.hours++;
      opts.onProgress?.(run.hours, total);
    }
    i = end;
  }
  if (run.hours < due.length) {
    run.pending = due.filter((h) => !folded.has(h)).length;
    return run;
  }
  for (const day of days) {
    if (outOfTime()) break;
    if (!hoursOfDay(day).every((h) => folded.has(h))) continue;
    await opts.rest?.(last);
    const t = Date.now();
    if (await foldDay(db, day, nowMs)) run.days++;
    last = Date.now() - t;
    opts.onProgress?.(run.hours + run.days, total);
  }
  return run;
}
