import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import {
  analyticsDataset,
  insertAnalyticsWorld,
  insertFlow,
  insertLeads,
  insertPartner,
  type LeadInput,
} from '../../../test/fixtures.js';
import { emptyDatabase, forEachDatabase } from '../../../test/helpers.js';
import { capSlots, reserve } from '../distribution/caps.js';
import { openDatabase } from './database.js';
import { LATEST_MIGRATION, migrate } from './migrate.js';
import { dropTrigger, installTrigger } from './triggers/index.js';
import { ROLLUP_TRIGGERS } from './triggers/rollups.js';

forEachDatabase('migrations', (engine) => {
  test('several instances migrating one database all succeed (at once on PostgreSQL), and a rerun changes nothing', async (t) => {
    const config = await emptyDatabase(t, engine);
    const dbs = [openDatabase(config), openDatabase(config), openDatabase(config)];
    t.after(() => Promise.all(dbs.map((db) => db.destroy())));

    // PostgreSQL: all at once, as instances starting together do. SQLite: one after another, since
    // better-sqlite3 is synchronous and one process's connections would wait on each other
    // inside a single thread (separate processes queue on the file lock instead).
    const results =
      engine === 'postgres'
        ? await Promise.all(dbs.map((db) => migrate(db)))
        : [await migrate(dbs[0]), await migrate(dbs[1]), await migrate(dbs[2])];
    for (const r of results) assert.equal(r.level, LATEST_MIGRATION);
    const rows = await dbs[0]
      .selectFrom('schema_migrations' as any)
      .selectAll()
      .execute();
    assert.equal(new Set(rows.map((r: any) => r.name)).size, rows.length, 'each migration recorded once');
    assert.ok(rows.some((r: any) => r.name === LATEST_MIGRATION));
    assert.deepEqual(await migrate(dbs[1]), { level: LATEST_MIGRATION });
    assert.equal(
      (
        await dbs[0]
          .selectFrom('schema_migrations' as any)
          .selectAll()
          .execute()
      ).length,
      rows.length,
    );
    // The tables exist and are usable.
    assert.deepEqual(await dbs[2].selectFrom('operators').select('id').execute(), []);
  });

  test("upgrading to the routing rules: cap counters already written learn what they count, and the next reservation's alert names it", async (t) => {
    const db = openDatabase(await emptyDatabase(t, engine));
    t.after(() => db.destroy());
    await migrate(db, { until: '20261126T000000Z_event_outbox' });
    // As the release before left it: a partner's daily cap at 8 of 10 today, and a target's at 1 of 2.
    const partner = await insertPartner(db);
    const flow = await insertFlow(db, [partner]);
    await db.updateTable('partners').set({ daily_cap: 10 }).where('id', '=', partner).execute();
    await db.updateTable('flow_targets').set({ daily_cap: 2 }).where('flow_id', '=', flow).execute();
    const target = (
      await db.selectFrom('flow_targets').select('id').where('flow_id', '=', flow).executeTakeFirstOrThrow()
    ).id;
    const today = new Date().toISOString().slice(0, 10);
    for (const [scope, used] of [
      [`partner:${partner}`, 8],
      [`target:${target}`, 1],
    ] as const) {
      await db
        .insertInto('cap_counters' as any)
        .values({ scope, period: today, used })
        .execute();
    }

    assert.deepEqual(await migrate(db), { level: LATEST_MIGRATION });
    const rows = await db
      .selectFrom('cap_counters')
      .select(['scope', 'partner_id', 'flow_id', 'cap_kind', 'counts', 'used'])
      .orderBy('scope')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.scope, r.partner_id, r.flow_id, r.cap_kind, r.counts, Number(r.used)]),
      [
        [`partner:${partner}`, partner, null, 'daily', 'deliveries', 8],
        [`target:${target}`, partner, flow, 'flow_daily', 'deliveries', 1],
      ],
    );

    // The next lead takes the 9th and the 2nd slot: 90 % of the partner's cap, the target's full.
    const owner = {
      partner: { id: partner, daily_cap: 10, hourly_cap: null, total_cap: null, working_hours: null },
      target: {
        id: target,
        flow_id: flow,
        daily_cap: 2,
        hourly_cap: null,
        total_cap: null,
        country_caps: {},
        cap_counts: 'deliveries' as const,
      },
    };
    assert.equal(await db.transaction().execute((trx) => reserve(trx, capSlots(owner, Date.now(), 'DE'))), null);
    const alerts = await db.selectFrom('events').select(['type', 'partner_id', 'data']).orderBy('id').execute();
    assert.deepEqual(
      alerts
        .map((e) => ({ type: e.type, partner: e.partner_id, ...JSON.parse(e.data) }))
        .map((e) => [e.type, e.partner, e.cap_kind, e.flow_id, e.used, e.cap]),
      [
        ['partner.cap_nearly_full', partner, 'daily', null, 9, 10],
        ['partner.cap_full', partner, 'flow_daily', flow, 2, 2],
      ],
    );
  });

  test('upgrading to flagged rollups: n_flagged is filled from the leads already there (every rollup by registration hour), other measures untouched, then kept by the triggers', async (t) => {
    const db = openDatabase(await emptyDatabase(t, engine));
    t.after(() => db.destroy());
    await migrate(db, { until: '20261204T140000Z_blocklist_shapes' });
    // As the release before left it: leads with and without flags, and exact rollups without
    // n_flagged. (The rollup triggers a fresh database has here are already today's definitions,
    // which write n_flagged: set aside while the leads go in, the rollups filled as the released
    // triggers kept them, then put back for the migration to reinstall.)
    for (const trigger of ROLLUP_TRIGGERS) await dropTrigger(db, trigger);
    const w = await insertAnalyticsWorld(db);
    const rows = analyticsDataset(w);
    const ids = await insertLeads(db, rows);
    assert.ok(rows.some((r) => r.flags) && rows.some((r) => !r.flags));
    const flag = (c: string) => `sum(case when ${c} then 1 else 0 end)`;
    const volume = `count(*), ${flag("status = 'delivered'")}, ${flag("status = 'rejected'")}, ${flag("status = 'duplicate'")}, ${flag("status = 'failed'")}, count(ftd_at), sum(cost_cents), sum(revenue_cents), sum(case when ftd_at is null then revenue_cents else 0 end)`;
    await sql
      .raw(
        `insert into lead_stats_hourly select substr(created_at, 1, 13), country, coalesce(partner_id, ''), coalesce(campaign_id, ''), traffic_provider_id, coalesce(flow_id, ''), ${volume} from leads group by 1, 2, 3, 4, 5, 6`,
      )
      .execute(db);
    await sql
      .raw(
        `insert into lead_country_stats_hourly select substr(created_at, 1, 13), country, ${volume} from leads group by 1, 2`,
      )
      .execute(db);
    await sql
      .raw(
        `insert into lead_provider_stats_hourly select traffic_provider_id, substr(created_at, 1, 13), count(*), ${flag("status = 'delivered'")}, count(ftd_at), sum(cost_cents) from leads group by 1, 2`,
      )
      .execute(db);
    for (const trigger of ROLLUP_TRIGGERS) await installTrigger(db, trigger);
    const measures = ['n_leads', 'n_delivered', 'n_ftd', 'cost_cents'];
    const before = await rollupRows(db, measures);

    assert.deepEqual(await migrate(db), { level: LATEST_MIGRATION });
    const after = await rollupRows(db, [...measures, 'n_flagged']);
    for (const table of Object.keys(before))
      assert.deepEqual(
        Object.fromEntries(Object.entries(after[table]).map(([k, v]) => [k, v.slice(0, measures.length)])),
        before[table],
        `${table}: other measures untouched`,
      );
    const current = new Map(ids.map((id, i) => [id, { ...rows[i] }]));
    const check = async (what: string) => {
      const now = await rollupRows(db, ['n_leads', 'n_flagged']);
      const want = freshFlagged([...current.values()]);
      for (const table of Object.keys(want)) assert.deepEqual(now[table], want[table], `${table} ${what}`);
    };
    const flaggedOf = (all: Record<string, Record<string, number[]>>) =>
      Object.fromEntries(
        Object.entries(all).map(([table, byKey]) => [
          table,
          Object.fromEntries(Object.entries(byKey).map(([k, v]) => [k, [v[0], v.at(-1)!]])),
        ]),
      );
    assert.deepEqual(flaggedOf(after), freshFlagged([...current.values()]), 'backfilled');

    // The triggers keep it: a flagged lead in, a flagged lead out, flags cleared.
    const [added] = await insertLeads(db, [
      { traffic_provider_id: w.t2, flags: 1 << 3, created_at: rows[40].created_at },
    ]);
    current.set(added, { traffic_provider_id: w.t2, flags: 1 << 3, created_at: rows[40].created_at, country: 'DE' });
    const gone = ids.find((_, i) => rows[i].flags)!;
    await db.deleteFrom('leads').where('id', '=', gone).execute();
    current.delete(gone);
    const cleared = ids.findLast((_, i) => rows[i].flags)!;
    await db.updateTable('leads').set({ flags: 0 }).where('id', '=', cleared).execute();
    current.get(cleared)!.flags = 0;
    await check('after an insert, a delete and flags cleared');
  });
});

/** Each rollup by registration hour: its rows (key → the measures asked for), rows of no lead left out. */
async function rollupRows(db: ReturnType<typeof openDatabase>, measures: string[]) {
  const keys: Record<string, string[]> = {
    lead_stats_hourly: ['hour', 'country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'],
    lead_country_stats_hourly: ['hour', 'country'],
    lead_provider_stats_hourly: ['traffic_provider_id', 'hour'],
  };
  const out: Record<string, Record<string, number[]>> = {};
  for (const [table, key] of Object.entries(keys)) {
    const { rows } = await sql
      .raw<Record<string, unknown>>(`select ${[...key, ...measures].join(', ')} from ${table} where n_leads <> 0`)
      .execute(db);
    out[table] = Object.fromEntries(
      rows.map((r) => [key.map((k) => r[k]).join('|'), measures.map((m) => Number(r[m]))] as const).sort(),
    );
  }
  return out;
}

/** [leads, flagged] per row of each rollup, counted from the lead rows themselves. */
function freshFlagged(leads: LeadInput[]) {
  const out: Record<string, Record<string, number[]>> = {
    lead_stats_hourly: {},
    lead_country_stats_hourly: {},
    lead_provider_stats_hourly: {},
  };
  for (const r of leads) {
    const hour = r.created_at!.slice(0, 13);
    const country = r.country ?? 'DE';
    for (const [table, k] of [
      [
        'lead_stats_hourly',
        [hour, country, r.partner_id ?? '', r.campaign_id ?? '', r.traffic_provider_id, r.flow_id ?? ''].join('|'),
      ],
      ['lead_country_stats_hourly', `${hour}|${country}`],
      ['lead_provider_stats_hourly', `${r.traffic_provider_id}|${hour}`],
    ] as const) {
      const v = out[table][k] ?? [0, 0];
      out[table][k] = [v[0] + 1, v[1] + (r.flags ? 1 : 0)];
    }
  }
  for (const table of Object.keys(out)) out[table] = Object.fromEntries(Object.entries(out[table]).sort());
  return out;
}
