// `npm run demo-data` (scripts/demo-data.ts) end to end, on every engine: the real command on a
// fresh database, then the data it made. Kept here, beside the analytics it feeds, because the
// test runner looks under src/ and test/ only.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { forEachDatabase, POSTGRES_URL, type Engine } from '../../../../test/helpers.js';
import { sql } from 'kysely';
import { openDatabase, type DB } from '../../db/database.js';
import { migrate } from '../../db/migrate.js';
import { rollupsOfAllLeads } from '../../db/triggers/rollups.js';
import { SET_ASIDE_KEY, setAside } from '../../../../scripts/demo-data/set-aside.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const DAY = 86_400_000;

function demoData(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/demo-data.ts', ...args],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A fresh, empty database for the command: an SQLite file or a PostgreSQL schema. */
async function freshDatabase(t: TestContext, engine: Engine): Promise<{ url: string; db: DB }> {
  const dir = mkdtempSync(join(tmpdir(), 'leadgate-demo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  if (engine === 'sqlite') {
    const file = join(dir, 'demo.db');
    return { url: `sqlite:${file}`, db: openDatabase({ engine: 'sqlite', file }) };
  }
  const schema = `demo_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
  await admin.query(`create schema ${schema}`);
  t.after(async () => {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });
  const url = new URL(POSTGRES_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return { url: url.toString(), db: openDatabase({ engine: 'postgres', url: POSTGRES_URL, schema }) };
}

const count = async (
  db: DB,
  table: 'leads' | 'partners' | 'traffic_providers' | 'campaigns' | 'flows' | 'flow_targets' | 'lead_attempts',
) =>
  Number(
    (
      await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The indexes and triggers of the lead tables (set aside and put back by a load into a database without leads). */
async function leadTableObjects(db: DB, engine: Engine): Promise<string[]> {
  const { rows } =
    engine === 'sqlite'
      ? await sql<{ name: string }>`select type || ' ' || name as name from sqlite_master
          where type in ('index', 'trigger') and tbl_name in ('leads', 'lead_attempts')`.execute(db)
      : await sql<{ name: string }>`select 'index ' || indexname as name from pg_indexes
          where schemaname = current_schema() and tablename in ('leads', 'lead_attempts')
          union all select 'trigger ' || tgname from pg_trigger
          where not tgisinternal and tgrelid in ('leads'::regclass, 'lead_attempts'::regclass)`.execute(db);
  return rows.map((r) => r.name).sort();
}

const ROLLUPS = [
  'lead_stats_hourly',
  'lead_country_stats_hourly',
  'lead_provider_stats_hourly',
  'lead_ftd_stats_hourly',
];

/** Every rollup row with a lead in it, as text, sorted: equal snapshots hold equal counts. */
async function rollupSnapshot(db: DB): Promise<string[]> {
  const out: string[] = [];
  for (const table of ROLLUPS) {
    const rows = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(db);
    for (const r of rows.rows) {
      const values = Object.values(r).map((v) => (typeof v === 'string' && !/^-?\d+$/.test(v) ? v : Number(v)));
      if (values.some((v) => typeof v === 'number' && v !== 0)) out.push(`${table} ${JSON.stringify(values)}`);
    }
  }
  return out.sort();
}

forEachDatabase('Demo data', (engine) => {
  test('--leads 2000 makes a realistic configuration and 2,000 leads over 90 days; a second run needs --append', async (t) => {
    const { url, db } = await freshDatabase(t, engine);
    t.after(() => db.destroy());
    const started = Date.now();
    const run = await demoData(['--leads', '2000', '--database-url', url]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /leads \[#+\] 2,000\/2,000 100% [\d,]+\/s ETA/, 'a progress bar with rate and ETA');
    assert.match(run.stderr, /Done in [\d.]+ s .*2,000 leads/);

    assert.equal(await count(db, 'leads'), 2000);
    assert.equal(await count(db, 'partners'), 12);
    assert.equal(await count(db, 'traffic_providers'), 8);
    assert.equal(await count(db, 'campaigns'), 20);
    assert.ok((await count(db, 'flows')) >= 4 && (await count(db, 'flow_targets')) >= 12);

    const leads = await db.selectFrom('leads').selectAll().orderBy('id').execute();
    // Spread over the last 90 days, every week of them, in id order (UUIDv7 of their own time).
    const times = leads.map((l) => Date.parse(l.created_at));
    assert.ok(Math.min(...times) >= started - 90 * DAY - 60_000 && Math.max(...times) <= Date.now());
    assert.ok(
      Math.min(...times) < started - 85 * DAY && Math.max(...times) > started - 2 * DAY,
      'from the start of the period to its end',
    );
    const days = new Set(leads.map((l) => l.created_at.slice(0, 10)));
    assert.ok(days.size >= 75, `${days.size} distinct days`);
    for (let w = 0; w < 12; w++) {
      const inWeek = times.filter(
        (x) => x >= started - 90 * DAY + w * 7 * DAY && x < started - 90 * DAY + (w + 1) * 7 * DAY,
      ).length;
      assert.ok(inWeek > 80, `week ${w}: ${inWeek} leads`);
    }
    assert.deepEqual(
      [...times].sort((a, b) => a - b),
      times,
      'ids ascend with created_at',
    );

    // A realistic mix of outcomes, FTDs on a share of delivered leads only.
    const share = (s: string) => leads.filter((l) => l.status === s).length / leads.length;
    assert.ok(share('delivered') > 0.45 && share('delivered') < 0.85, `delivered ${share('delivered')}`);
    assert.ok(
      share('rejected') > 0.05 && share('duplicate') > 0.02 && share('failed') > 0.002,
      'rejected, duplicate and failed leads',
    );
    const ftds = leads.filter((l) => l.ftd_at !== null);
    assert.ok(ftds.length > 20 && ftds.length < leads.length * 0.2, `${ftds.length} FTDs`);
    for (const l of ftds)
      assert.ok(l.status === 'delivered' && l.ftd_at! > l.delivered_at!, 'an FTD follows a delivery');
    for (const l of leads.filter((x) => x.status === 'delivered'))
      assert.ok(l.partner_id && l.autologin_url && l.partner_lead_id, 'delivered leads carry the partner data');
    assert.ok(new Set(leads.map((l) => l.country)).size >= 10, 'many countries');
    assert.ok(
      leads.every(
        (l) =>
          /^\+\d{8,15}$/.test(l.phone) && /@([a-z]+\.)?example\.(com|net|org)$/.test(l.email) && l.sub_id1 && l.sub_id2,
      ),
    );
    assert.ok(leads.some((l) => l.cost_cents > 0) && leads.some((l) => l.revenue_cents > 0));
    // Fraud flags on a few percent, each scored as intake scores it.
    const flagged = leads.filter((l) => l.flags !== 0);
    assert.ok(flagged.length > 40 && flagged.length < leads.length * 0.15, `${flagged.length} flagged`);
    assert.ok(flagged.every((l) => l.quality_score !== null && l.quality_score < 100));
    assert.ok(leads.every((l) => l.flags !== 0 || l.quality_score === 100));
    // Delivery attempts: every delivered lead has its accepted one.
    const attempts = await db.selectFrom('lead_attempts').select(['lead_id', 'outcome']).execute();
    const accepted = new Set(attempts.filter((a) => a.outcome === 'accepted').map((a) => a.lead_id));
    assert.ok(leads.filter((l) => l.status === 'delivered').every((l) => accepted.has(l.id)));
    assert.ok(
      attempts.some((a) => a.outcome === 'rejected') &&
        attempts.some((a) => a.outcome === 'timeout' || a.outcome === 'error'),
    );
    // The analytics rollups saw every lead.
    const rolled = await (db as any)
      .selectFrom('lead_stats_hourly')
      .select((eb: any) => [eb.fn.sum('n_leads').as('n'), eb.fn.sum('n_flagged').as('flagged')])
      .executeTakeFirstOrThrow();
    assert.equal(Number(rolled.n), 2000);
    assert.equal(Number(rolled.flagged), flagged.length);

    const again = await demoData(['--leads', '10', '--database-url', url]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already has 2,000 leads; pass --append/);
    assert.equal(await count(db, 'leads'), 2000);

    const more = await demoData(['--leads', '300', '--append', '--days', '7', '--database-url', url]);
    assert.equal(more.code, 0, more.stderr);
    assert.equal(await count(db, 'leads'), 2300);
    assert.equal(await count(db, 'partners'), 12, 'the configuration is reused');

    // The first load set the lead tables' indexes and triggers aside and put every one back.
    const reference = await freshDatabase(t, engine);
    t.after(() => reference.db.destroy());
    await migrate(reference.db);
    const objects = await leadTableObjects(db, engine);
    assert.ok(objects.length > 30, objects.join());
    assert.deepEqual(objects, await leadTableObjects(reference.db, engine));
    assert.equal(
      await db.selectFrom('settings').select('key').where('key', '=', SET_ASIDE_KEY).executeTakeFirst(),
      undefined,
    );
    // Its rollups (2,000 leads added by grouped statements) plus the triggers' (300 leads, one by
    // one) are what counting all 2,300 again gives, row by row.
    const kept = await rollupSnapshot(db);
    for (const table of ROLLUPS) await sql`delete from ${sql.table(table)}`.execute(db);
    for (const statement of rollupsOfAllLeads()) await sql.raw(statement).execute(db);
    assert.ok(kept.length > 100);
    assert.deepEqual(kept, await rollupSnapshot(db));
  });

  test('a load that stopped with the indexes and triggers set aside is put back by the next run', async (t) => {
    const { url, db } = await freshDatabase(t, engine);
    t.after(() => db.destroy());
    const before = (await migrate(db), await leadTableObjects(db, engine));
    await setAside(db);
    assert.ok((await leadTableObjects(db, engine)).length < 5, 'set aside');
    const run = await demoData(['--leads', '50', '--database-url', url]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /indexes and rollups \[#+\]/, 'the build shows its progress');
    assert.deepEqual(await leadTableObjects(db, engine), before);
    const rolled = await sql<{ n: string | number }>`select sum(n_leads) as n from lead_stats_hourly`.execute(db);
    assert.equal(Number(rolled.rows[0].n), 50);
  });

  test('--partners 40 --providers 50 --days 730: a year-scale configuration, every provider sending', async (t) => {
    const { url, db } = await freshDatabase(t, engine);
    t.after(() => db.destroy());
    const run = await demoData([
      '--leads',
      '3000',
      '--days',
      '730',
      '--partners',
      '40',
      '--providers',
      '50',
      '--database-url',
      url,
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await count(db, 'partners'), 40);
    assert.equal(await count(db, 'traffic_providers'), 50);
    const offered = await db.selectFrom('flow_targets').select('partner_id').distinct().execute();
    assert.equal(offered.length, 40, 'every partner is a target of some flow');
    const senders = await db.selectFrom('leads').select('traffic_provider_id').distinct().execute();
    assert.equal(senders.length, 50);
    const oldest = await db
      .selectFrom('leads')
      .select((eb) => eb.fn.min('created_at').as('at'))
      .executeTakeFirstOrThrow();
    assert.ok(Date.now() - Date.parse(String(oldest.at)) > 700 * DAY, String(oldest.at));
  });

  test('bad arguments are refused before touching any database', async () => {
    for (const args of [
      [],
      ['--leads', '0'],
      ['--leads', 'many'],
      ['--leads', '5', '--days', '-3'],
      ['--leads', '5', '--frobnicate'],
    ]) {
      const run = await demoData(args, { DATA_DIR: join(tmpdir(), 'leadgate-demo-never-created') });
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /--leads|Unknown option|must be/);
    }
  });
});
