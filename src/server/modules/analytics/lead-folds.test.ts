// The leads report's folded UTC days (lead-folds.ts, db/triggers/lead-folds.ts), on every engine:
// the report answers the same from the days as from the hours, reads the days when they are
// folded, and a change to a folded day's leads unfolds it in the writer's own transaction.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { analyticsDataset, insertAnalyticsWorld, insertLeads } from '../../../../test/fixtures.js';
import { buildTestApp, forEachDatabase, getJson, newOperator } from '../../../../test/helpers.js';
import type { DB } from '../../db/database.js';
import { foldLeadDays } from './lead-folds.js';

/** After the dataset's last lead (2026-04-05): every day of it has ended. */
const NOW = Date.UTC(2026, 3, 10, 1);
const RANGES = [
  'date_from=2026-03-01&date_to=2026-03-31&timezone=UTC',
  'date_from=2026-03-01&date_to=2026-03-31&timezone=Europe/Berlin', // across its DST change
  'date_from=2026-02-27&date_to=2026-04-09&timezone=Asia/Kolkata',
  'date_from=2026-03-03T10:30:00Z&date_to=2026-03-20T04:45:00Z',
];

const queries = (w: Awaited<ReturnType<typeof insertAnalyticsWorld>>) =>
  RANGES.flatMap((r) => [
    `summary?${r}`,
    `report?group_by=partner&${r}`,
    `report?group_by=traffic_provider&${r}`,
    `report?group_by=campaign&then_by=country&${r}`,
    `report?group_by=flow&then_by=partner&${r}`,
    `report?group_by=partner&country=DE&country=FR&${r}`,
    `report?group_by=campaign&partner_id=${w.p1}&${r}`,
    `report?group_by=day&${r}`, // by local day: the hours, not the days
    `report?group_by=partner&date_type=ftd&${r}`,
    // By week or month: the UTC days wholly inside one local period, the hours around them.
    `report?group_by=week&then_by=partner&${r}`,
    `report?group_by=month&then_by=campaign&country=DE&${r}`,
    `report?group_by=traffic_provider&then_by=week&${r}`,
    `report?group_by=month&then_by=week&${r}`,
  ]);
const PER_RANGE = 13;

async function answers(ta: Awaited<ReturnType<typeof buildTestApp>>, list: string[], token?: string) {
  const out: unknown[] = [];
  for (const q of list) out.push(await getJson(ta, `/api/analytics/${q}`, token));
  return out;
}
const folds = async (db: DB) =>
  (await db.selectFrom('lead_stats_folds').select('day').orderBy('day').execute()).map((r) => r.day);

forEachDatabase('Leads report from folded days', (engine) => {
  test('folded and unfolded answers are equal for every grouping, filter, zone and scope; the days are read', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    await insertLeads(ta.db, analyticsDataset(w));
    const list = queries(w);
    assert.equal(list.length, RANGES.length * PER_RANGE);
    const scoped = await newOperator(ta, ['analytics:view'], { traffic_provider_ids: [w.t1], partner_ids: null });
    const raw = await answers(ta, list);
    const rawScoped = await answers(ta, list.slice(0, PER_RANGE), scoped.token);

    const run = await foldLeadDays(ta.db, { nowMs: NOW });
    assert.equal(run.days, 42, 'every day from 02-27 to 04-09');
    assert.equal(run.pending, 0);
    assert.deepEqual(await answers(ta, list), raw);
    assert.deepEqual(await answers(ta, list.slice(0, PER_RANGE), scoped.token), rawScoped);
    assert.deepEqual(await foldLeadDays(ta.db, { nowMs: NOW }), { hours: 0, days: 0, pending: 0 });

    // The report reads them: a day's sums changed there are what it answers.
    const n = Number(
      (await sql<{ n: unknown }>`select count(*) as n from lead_stats_daily where day = '2026-03-04'`.execute(ta.db))
        .rows[0].n,
    );
    assert.ok(n > 0);
    await sql`update lead_stats_daily set n_leads = n_leads + 1000 where day = '2026-03-04'`.execute(ta.db);
    // (the report by partner: a summary reads the country rollup, a seventh of the rows)
    const body = await getJson(ta, `/api/analytics/report?group_by=partner&${RANGES[0]}`);
    assert.equal(body.totals.leads, (raw[1] as typeof body).totals.leads + 1000 * n);
    // By week then partner too, and the day's week (03-02 to 03-08) holds them.
    const weeks = await getJson(ta, `/api/analytics/report?group_by=week&then_by=partner&${RANGES[0]}`);
    const before = raw[9] as typeof weeks;
    assert.equal(weeks.totals.leads, before.totals.leads + 1000 * n);
    const week10 = (b: typeof weeks) => b.rows.find((r: { key: string }) => r.key === '2026-W10').leads;
    assert.equal(week10(weeks), week10(before) + 1000 * n);
  });

  test('a change to a folded day unfolds it at once, and only it; the next run folds it again', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertAnalyticsWorld(ta.db);
    const ids = await insertLeads(ta.db, analyticsDataset(w));
    const list = queries(w).slice(0, 2 * PER_RANGE);
    await foldLeadDays(ta.db, { nowMs: NOW });
    const all = await folds(ta.db);
    const fresh = async () => {
      const kept = await ta.db.selectFrom('lead_stats_folds').selectAll().execute();
      await ta.db.deleteFrom('lead_stats_folds').execute();
      const out = await answers(ta, list);
      if (kept.length) await ta.db.insertInto('lead_stats_folds').values(kept).execute();
      return out;
    };
    const gone = async (days: string[]) => {
      const now = new Set(await folds(ta.db));
      for (const d of days) assert.ok(!now.has(d), `${d} unfolded`);
      assert.equal(now.size, all.length - days.length, 'nothing else unfolded');
      assert.deepEqual(await answers(ta, list), await fresh());
      await foldLeadDays(ta.db, { nowMs: NOW });
      assert.deepEqual(await folds(ta.db), all);
      assert.deepEqual(await answers(ta, list), await fresh());
    };

    // A lead registered with an old date (a CSV import keeps the file's): 03-05.
    await insertLeads(ta.db, [
      {
        created_at: '2026-03-05T12:00:00.000Z',
        status: 'delivered',
        traffic_provider_id: w.t1,
        partner_id: w.p2,
        country: 'IT',
      },
    ]);
    await gone(['2026-03-05']);
    // An FTD moved for lead 10 (registered 02-27T00:00Z + 10 × 5 h 17 min = 03-01T04:50Z).
    await ta.db.updateTable('leads').set({ ftd_at: '2026-03-08T10:00:00.000Z' }).where('id', '=', ids[10]).execute();
    await gone(['2026-03-01']);
    // A lead deleted (lead 40: 03-07T18:20Z).
    await ta.db.deleteFrom('leads').where('id', '=', ids[40]).execute();
    await gone(['2026-03-07']);
  });
});
