import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertFlow, insertPartner } from '../../../test/fixtures.js';
import { emptyDatabase, forEachDatabase } from '../../../test/helpers.js';
import { capSlots, reserve } from '../distribution/caps.js';
import { openDatabase } from './database.js';
import { LATEST_MIGRATION, migrate } from './migrate.js';

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
});
