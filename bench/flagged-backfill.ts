// Times migration 20261205T200000Z_flagged_rollups (n_flagged in the rollups, issue 29) on a
// database at the release before it holding N leads, one in 13 with a fraud flag:
//   npx tsx bench/flagged-backfill.ts sqlite|postgres [N=1000000] [postgres URL]
// SQLite: a file in a temporary directory; PostgreSQL: a schema of its own, dropped afterwards.
// The leads go in with one INSERT … SELECT, the rollup triggers set aside and the rollups filled
// as the released triggers kept them (today's triggers write n_flagged, which does not exist yet).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openDatabase } from '../src/server/db/database.js';
import { migrate } from '../src/server/db/migrate.js';
import { dropTrigger, installTrigger } from '../src/server/db/triggers/index.js';
import { ROLLUP_TRIGGERS } from '../src/server/db/triggers/rollups.js';
import { insertPartner, insertTrafficProvider } from '../test/fixtures.js';

const engine = process.argv[2];
if (engine !== 'sqlite' && engine !== 'postgres')
  throw new Error('Usage: bench/flagged-backfill.ts sqlite|postgres [N] [url]');
const N = Number(process.argv[3] ?? 1_000_000);
const url = process.argv[4] ?? process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:55432/postgres';
const schema = `flagbench_${process.pid}`;
const dir = engine === 'sqlite' ? mkdtempSync(join(tmpdir(), 'leadgate-flagbench-')) : null;
const db = openDatabase(
  engine === 'postgres' ? { engine: 'postgres', url, schema } : { engine: 'sqlite', file: join(dir!, 'db.sqlite') },
) as any;
if (engine === 'postgres') await sql.raw(`create schema ${schema}`).execute(db);
const pg = engine === 'postgres';
const t0 = Date.now();
const lap = (what: string, since: number) => console.log(`${what}: ${((Date.now() - since) / 1000).toFixed(2)} s`);
await migrate(db, { until: '20261204T140000Z_blocklist_shapes' });
for (const t of ROLLUP_TRIGGERS) await dropTrigger(db, t);
await sql`create table tp (n integer primary key, id text not null)`.execute(db);
await sql`create table pa (n integer primary key, id text not null)`.execute(db);
for (let i = 0; i < 50; i++) await sql`insert into tp values (${i}, ${await insertTrafficProvider(db)})`.execute(db);
for (let i = 0; i < 20; i++) await sql`insert into pa values (${i}, ${await insertPartner(db)})`.execute(db);
const seq = pg
  ? sql`select g as i from generate_series(0, ${sql.lit(N - 1)}) g`
  : sql`with recursive s(i) as (select 0 union all select i + 1 from s where i < ${sql.lit(N - 1)}) select i from s`;
const at = pg
  ? sql`to_char(timestamp '2026-09-01' + q.i * interval '7.776 seconds', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
  : sql`strftime('%Y-%m-%dT%H:%M:%fZ', '2026-09-01', '+' || (q.i * 7.776) || ' seconds')`;
let t = Date.now();
await sql`insert into leads (id, created_at, first_name, last_name, email, phone, country, ip, traffic_provider_id, partner_id, status, status_updated_at, cost_cents, revenue_cents, flags)
  select 'L' || q.i, ${at}, 'Ada', 'L' || q.i, 'l' || q.i || '@example.test', '+4915' || q.i, (case q.i % 5 when 0 then 'DE' when 1 then 'FR' when 2 then 'GB' when 3 then 'AT' else 'IT' end), '203.0.113.7',
    tp.id, (case when q.i % 4 in (0, 2) then pa.id end), (case q.i % 4 when 0 then 'delivered' when 1 then 'rejected' when 2 then 'delivered' else 'duplicate' end), ${at}, 1000, 2000,
    (case when q.i % 13 = 0 then 1 << (q.i % 4) else 0 end)
  from (${seq}) q join tp on tp.n = q.i % 50 join pa on pa.n = q.i % 20`.execute(db);
lap(`${N} leads inserted (no triggers)`, t);
t = Date.now();
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
for (const tr of ROLLUP_TRIGGERS) await installTrigger(db, tr);
if (pg) await sql`analyze`.execute(db);
lap('rollups filled', t);
const counts = async (table: string) =>
  Number((await sql.raw<any>(`select count(*) as n from ${table}`).execute(db)).rows[0].n);
console.log(
  'rollup rows:',
  await counts('lead_stats_hourly'),
  await counts('lead_country_stats_hourly'),
  await counts('lead_provider_stats_hourly'),
);
t = Date.now();
console.log(await migrate(db));
lap('migration 20261205T200000Z_flagged_rollups', t);
const check = await sql
  .raw<any>(
    `select (select sum(n_flagged) from lead_stats_hourly) a, (select sum(n_flagged) from lead_country_stats_hourly) b, (select sum(n_flagged) from lead_provider_stats_hourly) c, (select count(*) from leads where flags <> 0) d`,
  )
  .execute(db);
console.log('n_flagged sums (full, country, provider) and flagged leads:', check.rows[0]);
lap('total', t0);
if (engine === 'postgres') await sql.raw(`drop schema ${schema} cascade`).execute(db);
await db.destroy();
if (dir) rmSync(dir, { recursive: true, force: true });
