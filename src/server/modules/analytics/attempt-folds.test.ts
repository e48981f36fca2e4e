// Partner performance's folded buckets (attempt-folds.ts, attempt-rollups.ts, the triggers in
// db/triggers/attempt-folds.ts), on every engine: the report answers the same from the folds as
// from the attempts, reads the folds when they are there, and a change to an attempt or link in a
// folded hour takes the hour and its day out of them in the writer's own transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { insertAnalyticsWorld, insertAttempt, insertLeads, type LeadInput } from '../../../../test/fixtures.js';
import { buildTestApp, forEachDatabase, getJson, newOperator } from '../../../../test/helpers.js';
import type { DB } from '../../db/database.js';
import { FOLD_AFTER_MS, foldDue } from './attempt-folds.js';

const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 1, 5, 17);
/** The day after the last call: everything before is closed. */
const NOW = Date.UTC(2026, 2, 12, 12);
const RANGES = [
  'date_from=2026-03-01&date_to=2026-03-11&timezone=UTC',
  'date_from=2026-03-02&date_to=2026-03-09&timezone=Europe/Berlin', // days starting at 23:00Z: edges of an hour
  'date_from=2026-03-03T10:30:00Z&date_to=2026-03-07T04:45:00Z', // partial hours at both ends
  'date_from=2026-03-01&date_to=2026-03-14&timezone=Asia/Kolkata', // +5:30: no whole hour lines up with a day
];

async function world(db: DB) {
  const w = await insertAnalyticsWorld(db);
  const leads: LeadInput[] = [];
  for (let i = 0; i < 60; i++) {
    leads.push({
      traffic_provider_id: i % 3 ? w.t1 : w.t2,
      country: i % 2 ? 'DE' : 'FR',
      created_at: new Date(START + i * 4 * HOUR).toISOString(),
      status: 'delivered',
    });
  }
  const ids = await insertLeads(db, leads);
  let n = 0;
  for (const [i, id] of ids.entries()) {
    const at = START + i * 4 * HOUR;
    if (i % 4 === 0) {
      await insertAttempt(db, {
        lead_id: id,
        partner_id: w.p1,
        attempt_no: ++n,
        outcome: 'rejected',
        reason: `lead${i}@example.com is already registered (ref ${1_000_000 + i})`,
        requested_at: new Date(at).toISOString(),
        duration_ms: 100 + i,
      });
    }
    await insertAttempt(db, {
      lead_id: id,
      partner_id: i % 2 ? w.p1 : w.p2,
      attempt_no: ++n,
      outcome: i % 5 === 1 ? 'timeout' : 'accepted',
      requested_at: new Date(at + 59 * 60_000).toISOString(), // the next hour for some
      duration_ms: i % 5 === 1 ? null : 200,
      injection_id: i % 6 === 0 ? 'job-1' : null,
    });
    if (i % 3 === 0) {
      await db
        .insertInto('autologin_links')
        .values({
          token_hash: `h${i}`,
          lead_id: id,
          partner_id: i % 2 ? w.p1 : w.p2,
          single_use: 0,
          created_at: new Date(at + 3_600_000).toISOString(),
          opens: i % 2,
        })
        .execute();
    }
  }
  return { w, ids };
}

const QUERIES = (w: Awaited<ReturnType<typeof world>>['w']) =>
  RANGES.flatMap((range) => [
    range,
    `${range}&then_by=traffic_provider`,
    `${range}&then_by=origin`,
    `${range}&partner_id=${w.p1}`,
    `${range}&traffic_provider_id=${w.t2}&then_by=origin`,
    `${range}&then_by=country`, // never folded: read from the attempts
  ]);

async function answers(ta: Awaited<ReturnType<typeof buildTestApp>>, queries: string[], token?: string) {
  const out: unknown[] = [];
  for (const q of queries) out.push(await getJson(ta, `/api/analytics/partners?${q}`, token));
  return out;
}

const folds = async (db: DB) =>
  (await db.selectFrom('attempt_folds').select('bucket').orderBy('bucket').execute()).map((r) => r.bucket);

forEachDatabase('Partner performance from folded attempts', (engine) => {
  test('folded and unfolded answers are equal for every grouping, filter, time zone and scope; the folds are read', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { w } = await world(ta.db);
    const queries = QUERIES(w);
    const scoped = await newOperator(ta, ['analytics:view'], { traffic_provider_ids: [w.t1], partner_ids: null });
    const raw = await answers(ta, queries);
    const rawScoped = await answers(ta, queries.slice(0, 6), scoped.token);

    const run = await foldDue(ta.db, { nowMs: NOW });
    assert.ok(run.hours > 200 && run.days >= 10, `folded ${run.hours} hours and ${run.days} days`);
    assert.equal(run.pending, 0);
    assert.deepEqual(await answers(ta, queries), raw);
    assert.deepEqual(await answers(ta, queries.slice(0, 6), scoped.token), rawScoped);
    // The stored reasons carry no contact: the placeholders, as the report shows them.
    const reasons = await ta.db.selectFrom('attempt_reasons_daily').select('reason').distinct().execute();
    assert.deepEqual(reasons.map((r) => r.reason).sort(), [
      'no answer in time',
      '{email} is already registered (ref {number})',
    ]);
    // A second run finds nothing to do.
    assert.deepEqual(await foldDue(ta.db, { nowMs: NOW }), { hours: 0, days: 0, pending: 0 });

    // The report reads them: what the folds say is what it answers (days in UTC, hours at Berlin's edges).
    // (each partner's rows over every provider: the report neither splits nor narrows by provider)
    const rows = async (table: string, bucket: string) =>
      Number(
        (
          await sql<{
            n: unknown;
          }>`select count(*) as n from ${sql.table(table)} where bucket = ${bucket} and traffic_provider_id = ''`.execute(
            ta.db,
          )
        ).rows[0].n,
      );
    const [inDay, inHour] = [
      await rows('attempt_stats_daily', '2026-03-04'),
      await rows('attempt_stats_hourly', '2026-03-09T02'),
    ];
    assert.ok(inDay > 0 && inHour > 0);
    await sql`update attempt_stats_daily set attempts = attempts + 1000 where bucket = '2026-03-04'`.execute(ta.db);
    await sql`update attempt_stats_hourly set attempts = attempts + 7 where bucket = '2026-03-09T02'`.execute(ta.db);
    const utc = await getJson(ta, `/api/analytics/partners?${RANGES[0]}`);
    assert.equal(utc.totals.attempts, (raw[0] as typeof utc).totals.attempts + 1000 * inDay);
    const berlin = await getJson(ta, `/api/analytics/partners?${RANGES[1]}`);
    assert.equal(berlin.totals.attempts, (raw[6] as typeof berlin).totals.attempts + 1000 * inDay + 7 * inHour);
  });

  test('a change in a folded hour unfolds it and its day at once; the next run folds them again', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { w, ids } = await world(ta.db);
    const queries = QUERIES(w).slice(0, 12);
    await foldDue(ta.db, { nowMs: NOW });
    const all = await folds(ta.db);
    const fresh = async () => {
      // The truth: the same report with nothing folded.
      const kept = await ta.db.selectFrom('attempt_folds').selectAll().execute();
      await ta.db.deleteFrom('attempt_folds').execute();
      const out = await answers(ta, queries);
      if (kept.length) await ta.db.insertInto('attempt_folds').values(kept).execute();
      return out;
    };
    const gone = async (buckets: string[]) => {
      const now = new Set(await folds(ta.db));
      for (const b of buckets) assert.ok(!now.has(b), `${b} unfolded`);
      assert.equal(now.size, all.length - buckets.length, 'nothing else unfolded');
      assert.deepEqual(await answers(ta, queries), await fresh());
      await foldDue(ta.db, { nowMs: NOW });
      assert.deepEqual(await folds(ta.db), all);
      assert.deepEqual(await answers(ta, queries), await fresh());
    };

    // An outcome changed (03-01T05: lead 0's refusal); its lead's link (06:17) may change origin with it.
    await ta.db
      .updateTable('lead_attempts')
      .set({ outcome: 'accepted' })
      .where('lead_id', '=', ids[0])
      .where('outcome', '=', 'rejected')
      .execute();
    await gone(['2026-03-01T05', '2026-03-01T06', '2026-03-01']);
    // A reason changed (an erasure scrubbing it): lead 4's refusal at 03-01T21.
    await ta.db
      .updateTable('lead_attempts')
      .set({ reason: 'scrubbed' })
      .where('lead_id', '=', ids[4])
      .where('outcome', '=', 'rejected')
      .execute();
    await gone(['2026-03-01T21', '2026-03-01']);
    // A finished call added to a folded hour (03-02T10).
    await insertAttempt(ta.db, {
      lead_id: ids[7],
      partner_id: w.p2,
      attempt_no: 900,
      outcome: 'rejected',
      reason: 'late',
      requested_at: '2026-03-02T10:30:00.000Z',
    });
    await gone(['2026-03-02T10', '2026-03-02']);
    // A call in flight added there changes nothing.
    await insertAttempt(ta.db, {
      lead_id: ids[7],
      partner_id: w.p2,
      attempt_no: 901,
      outcome: 'in_flight',
      requested_at: '2026-03-02T11:30:00.000Z',
    });
    assert.deepEqual(await folds(ta.db), all);
    // A tracked link opened for the first time (lead 6's, made at 03-02T06:17).
    await ta.db.updateTable('autologin_links').set({ opens: 1 }).where('token_hash', '=', 'h6').execute();
    await gone(['2026-03-02T06', '2026-03-02']);
    // Opened again: still opened, nothing to unfold.
    await ta.db.updateTable('autologin_links').set({ opens: 2 }).where('token_hash', '=', 'h6').execute();
    assert.deepEqual(await folds(ta.db), all);
    // An accepted call re-marked as a re-injection's: its hour and its lead's link's hour (lead 15:
    // the call at 03-03T18:16, its link 18:17).
    await ta.db
      .updateTable('lead_attempts')
      .set({ injection_id: 'job-2' })
      .where('lead_id', '=', ids[15])
      .where('outcome', '=', 'accepted')
      .execute();
    await gone(['2026-03-03T18', '2026-03-03']);
    // A lead's calls and link deleted (lead 24: calls 03-05T05:17 and 06:16, its link 03-05T06:17).
    await ta.db.deleteFrom('autologin_links').where('lead_id', '=', ids[24]).execute();
    await ta.db.deleteFrom('lead_attempts').where('lead_id', '=', ids[24]).execute();
    await gone(['2026-03-05T05', '2026-03-05T06', '2026-03-05']);
  });

  test('only closed hours are folded: the last FOLD_AFTER_MS is read from the attempts', async (t) => {
    const ta = await buildTestApp(t, engine);
    await world(ta.db);
    // The last call is at 03-11T02:16 (lead 59), its link 02:17.
    await foldDue(ta.db, { nowMs: Date.UTC(2026, 2, 11, 3) + FOLD_AFTER_MS - 1 });
    const buckets = await folds(ta.db);
    assert.ok(buckets.includes('2026-03-11T01') && buckets.includes('2026-03-10'));
    assert.ok(!buckets.includes('2026-03-11T02'), 'its hour ended less than FOLD_AFTER_MS ago');
    assert.ok(!buckets.includes('2026-03-11'), 'nor its day');
    await foldDue(ta.db, { nowMs: Date.UTC(2026, 2, 11, 3) + FOLD_AFTER_MS });
    assert.ok((await folds(ta.db)).includes('2026-03-11T02'));
  });

  test('a sparse history: the empty hours of a day are folded in one statement, the others one by one', async (t) => {
    let markers = 0;
    const ta = await buildTestApp(t, engine, {
      onQuery: (q) => void (/^insert into "attempt_folds"/.test(q) && markers++),
    });
    const { w } = await world(ta.db);
    // A call in 03-20T10 only, nine days after the rest: the days between hold nothing.
    const [lone] = await insertLeads(ta.db, [
      { traffic_provider_id: w.t1, created_at: '2026-03-20T10:05:00.000Z', status: 'delivered' },
    ]);
    await insertAttempt(ta.db, {
      lead_id: lone,
      partner_id: w.p1,
      attempt_no: 1,
      outcome: 'accepted',
      requested_at: '2026-03-20T10:05:00.000Z',
      duration_ms: 50,
    });
    const now = Date.UTC(2026, 2, 21, 12);
    const withData = new Set(
      [
        ...(await ta.db.selectFrom('lead_attempts').select('requested_at as at').execute()),
        ...(await ta.db.selectFrom('autologin_links').select('created_at as at').execute()),
      ].map((r) => r.at.slice(0, 13)),
    );
    markers = 0;
    const run = await foldDue(ta.db, { nowMs: now });
    const hours = (Date.UTC(2026, 2, 21, 11) - Date.UTC(2026, 2, 1)) / HOUR; // 03-01T00 to 03-21T10
    assert.deepEqual(run, { hours, days: 20, pending: 0 });
    const stored = await folds(ta.db);
    assert.equal(stored.filter((b) => b.length === 13).length, hours, 'every closed hour has its marker');
    // One insert per hour with a call or link, one per day for its empty hours, one per day folded.
    const daysWithEmpty = new Set(stored.filter((b) => b.length === 13 && !withData.has(b)).map((b) => b.slice(0, 10)))
      .size;
    assert.equal(markers, withData.size + daysWithEmpty + run.days, `${markers} inserts`);
    assert.ok(markers < hours / 2, `${markers} inserts for ${hours} hours`);
    // What is read from them is what the attempts say.
    const range = 'date_from=2026-03-01&date_to=2026-03-21&timezone=UTC';
    const folded = await getJson(ta, `/api/analytics/partners?${range}`);
    await ta.db.deleteFrom('attempt_folds').execute();
    assert.deepEqual(folded, await getJson(ta, `/api/analytics/partners?${range}`));
  });
});
