// Search and analytics benchmark: 1,000,000 demo leads in a fresh SQLite file and a fresh
// PostgreSQL database, the real server process on 127.0.0.1, and p50/p95 latency of typical
// Leads-table searches and analytics reports measured over HTTP. See bench/README.md.
//
//   npm run bench -- [--leads 1000000] [--engines sqlite,postgres] [--runs 50] [--reuse]
//                    [--days 90] [--partners 12] [--providers 8] [--only <text in a query's name>]
//                    [--postgres-url postgres://postgres@127.0.0.1:55432/postgres]
// A year of traffic at scale: --leads 10000000 --days 730 --partners 40 --providers 50.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { databaseUrl, loadFreshDemoData, WORK, type Engine } from './data.js';
import { OWNER, startServer } from './server.js';
import { sql } from 'kysely';
import { openDatabase, type DB } from '../src/server/db/database.js';
import { DEEP_PAGES, QUERIES, type Fixture, type Query } from './queries.js';
import { flagNames } from '../src/server/db/lead-flags.js';

const WARMUP = 3;
const REQUEST_TIMEOUT_MS = 10_000;
const MEASURE_DEADLINE_MS = 30 * 60_000; // per engine, whatever happens

const { values: args } = parseArgs({
  options: {
    leads: { type: 'string', default: '1000000' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '50' },
    reuse: { type: 'boolean', default: false },
    /** Only the queries whose name contains this text (e.g. "Partner performance"). */
    only: { type: 'string' },
    days: { type: 'string', default: '90' },
    partners: { type: 'string', default: '12' },
    providers: { type: 'string', default: '8' },
    'postgres-url': {
      type: 'string',
      default:
        process.env.BENCH_POSTGRES_URL ||
        process.env.TEST_POSTGRES_URL ||
        'postgres://postgres@127.0.0.1:55432/postgres',
    },
  },
});
const LEADS = Number(args.leads);
/** What the demo-data generator is asked for besides the leads (scripts/demo-data.ts checks them). */
const SHAPE = ['--days', args.days!, '--partners', args.partners!, '--providers', args.providers!];
const RUNS = Math.min(200, Math.max(5, Number(args.runs)));
const ENGINES = args.engines!.split(',').map((e) => e.trim()) as Engine[];
if (!Number.isInteger(LEADS) || LEADS < 1000) throw new Error('--leads must be a whole number of at least 1000');
for (const e of ENGINES) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`unknown engine ${e}`);

const log = (...a: unknown[]) => console.error('[bench]', ...a);

async function countLeads(url: string): Promise<number> {
  const db = openFor(url);
  try {
    return Number(
      (
        await db
          .selectFrom('leads')
          .select((eb) => eb.fn.countAll<string>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  } catch {
    return 0; // no such database or table yet
  } finally {
    await db.destroy();
  }
}

function openFor(url: string): DB {
  return url.startsWith('sqlite:')
    ? openDatabase({ engine: 'sqlite', file: url.slice('sqlite:'.length) })
    : openDatabase({ engine: 'postgres', url });
}

/** A fresh database with LEADS demo leads (or the one from last time with --reuse). */
async function prepare(engine: Engine, url: string): Promise<number | null> {
  if (args.reuse && (await countLeads(url)) === LEADS) {
    log(`${engine}: reusing the ${LEADS.toLocaleString('en-US')} leads already loaded`);
    return null;
  }
  log(`${engine}: loading ${LEADS.toLocaleString('en-US')} demo leads`);
  return loadFreshDemoData(engine, url, LEADS, args['postgres-url']!, SHAPE);
}

/** Ids and values that exist in the data, so filters match like real ones do. */
async function fixtureFrom(url: string): Promise<Fixture> {
  const db = openFor(url);
  try {
    const busiest = async (column: 'partner_id' | 'campaign_id' | 'traffic_provider_id' | 'flow_id') =>
      (
        await db
          .selectFrom('leads')
          .select(column)
          .where(column, 'is not', null)
          .groupBy(column)
          .orderBy(sql`count(*)`, 'desc')
          .limit(1)
          .executeTakeFirstOrThrow()
      )[column] as string;
    // The commonest value among the newest 100,000 leads (a sample, so this stays quick at 10,000,000).
    const commonest = async (column: string, also = sql`1 = 1`) => {
      const c = sql.ref(column);
      const { rows } = await sql<{ v: string | number }>`
        select ${c} as v from (select ${c} from leads order by created_at desc limit 100000) s
        where ${c} is not null and ${also} group by ${c} order by count(*) desc limit 1`.execute(db);
      if (!rows.length) throw new Error(`no lead has a ${column} to filter on`);
      return rows[0].v;
    };
    const since = new Date(Date.now() - 20 * 86_400_000).toISOString();
    const sample = await db
      .selectFrom('leads')
      .select(['id', 'email', 'phone', 'first_name', 'last_name', 'sub_id3'])
      .where('created_at', '>', since)
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirstOrThrow();
    const leadIds = await db
      .selectFrom('leads')
      .select('id')
      .where('created_at', '>', since)
      .orderBy('created_at')
      .limit(200)
      .execute();
    const flags = Number(await commonest('flags', sql`flags <> 0`));
    return {
      partnerId: await busiest('partner_id'),
      campaignId: await busiest('campaign_id'),
      providerId: await busiest('traffic_provider_id'),
      flowId: await busiest('flow_id'),
      leadId: sample.id,
      email: sample.email,
      phone: sample.phone,
      firstName: sample.first_name,
      lastName: sample.last_name,
      commonLastName: String(await commonest('last_name')),
      leadIds: leadIds.map((r) => r.id),
      subIds: [
        String(await commonest('sub_id1')),
        String(await commonest('sub_id2')),
        sample.sub_id3 ?? String(await commonest('sub_id3')),
        String(await commonest('sub_id4')),
        String(await commonest('sub_id5')),
      ],
      saleStatus: String(await commonest('sale_status', sql`sale_status <> 'New'`)),
      flag: flagNames(flags)[0],
      maxScore: Number(await commonest('quality_score', sql`quality_score < 100`)),
    };
  } finally {
    await db.destroy();
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

interface Result {
  query: Query;
  p50: number;
  p95: number;
  max: number;
  rows: string;
  errors: string[];
}

/** One request as the dashboard makes it: its status, its body and the time to read it. */
async function get(target: string, token: string) {
  const t0 = performance.now();
  const res = await fetch(target, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  const ms = performance.now() - t0;
  const json = (res.headers.get('content-type') ?? '').includes('json');
  return { status: res.status, text, ms, body: (): unknown => (json ? JSON.parse(text) : text) };
}

/** A deep query's path: its first page's, with the cursor reached by following next_cursor DEEP_PAGES times. */
async function deepPath(base: string, token: string, path: string): Promise<string> {
  let cursor = '';
  for (let page = 1; page <= DEEP_PAGES; page++) {
    const res = await get(`${base}${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token);
    if (res.status !== 200) throw new Error(`page ${page}: ${res.status} ${res.text.slice(0, 200)}`);
    cursor = (res.body() as { next_cursor: string | null }).next_cursor ?? '';
    if (!cursor) throw new Error(`no page ${DEEP_PAGES + 1}: the matches end on page ${page}`);
  }
  return `${path}&cursor=${encodeURIComponent(cursor)}`;
}

/** Until the server answers its health check within a second again (a timed-out query may still run). */
async function idle(base: string, deadline: number) {
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(1000) });
      if (res.ok) return;
    } catch {
      // still busy (or gone: the deadline ends the wait)
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function measure(base: string, token: string, fixture: Fixture, deadline: number): Promise<Result[]> {
  const results: Result[] = [];
  if (new URL(base).hostname !== '127.0.0.1') throw new Error('requests go to 127.0.0.1 only');
  for (const query of QUERIES.filter((q) => !args.only || q.name.includes(args.only))) {
    const times: number[] = [];
    const errors: string[] = [];
    let rows = '';
    let target = '';
    try {
      target = `${base}${query.deep ? await deepPath(base, token, query.path(fixture)) : query.path(fixture)}`;
    } catch (err) {
      errors.push((err as Error).message);
    }
    for (let i = 0; target && i < WARMUP + RUNS && Date.now() < deadline; i++) {
      let res: Awaited<ReturnType<typeof get>>;
      try {
        res = await get(target, token);
      } catch (err) {
        if ((err as Error).name !== 'TimeoutError') throw err;
        // Recorded, not retried; the server may still be working on it: the next query waits.
        errors.push(`timed out after ${REQUEST_TIMEOUT_MS / 1000} s`);
        await idle(base, deadline);
        break;
      }
      if (res.status !== 200) {
        errors.push(`${res.status} ${res.text.slice(0, 200)}`);
        if (errors.length >= 3) break;
        continue;
      }
      if (i >= WARMUP) times.push(res.ms);
      if (!rows) {
        try {
          rows = query.describe(res.body());
        } catch (err) {
          errors.push((err as Error).message);
          break;
        }
      }
    }
    times.sort((a, b) => a - b);
    const r = {
      query,
      p50: times.length ? percentile(times, 50) : NaN,
      p95: times.length ? percentile(times, 95) : NaN,
      max: times.at(-1) ?? NaN,
      rows,
      errors,
    };
    log(
      `${query.kind} ${query.name}: p50 ${r.p50.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms (${times.length} runs) ${errors[0] ?? ''}`,
    );
    results.push(r);
  }
  return results;
}

async function engineVersion(url: string): Promise<string> {
  const db = openFor(url);
  try {
    if (url.startsWith('sqlite:'))
      return `SQLite ${(await sql<{ v: string }>`select sqlite_version() as v`.execute(db)).rows[0].v}`;
    return String((await sql<{ v: string }>`select version() as v`.execute(db)).rows[0].v).split(' on ')[0];
  } finally {
    await db.destroy();
  }
}

function table(engine: string, version: string, loadSeconds: number | null, results: Result[]): string {
  const lines = [
    `### ${engine} (${version})`,
    '',
    loadSeconds === null
      ? 'Data: reused from the previous run.'
      : `Loading ${LEADS.toLocaleString('en-US')} leads (npm run demo-data) took ${loadSeconds.toFixed(0)} s.`,
    '',
    '| # | Query | p50 ms | p95 ms | max ms | Target p95 | Answer |',
    '|---|---|---:|---:|---:|---:|---|',
  ];
  for (const [i, r] of results.entries()) {
    const target = r.query.targetMs;
    const verdict = Number.isNaN(r.p95) ? 'failed' : r.p95 <= target ? `≤ ${target} ✓` : `≤ ${target} ✗`;
    lines.push(
      `| ${r.query.kind[0].toUpperCase()}${i + 1} | ${r.query.name} | ${r.p50.toFixed(1)} | ${r.p95.toFixed(1)} | ${r.max.toFixed(1)} | ${verdict} | ${r.errors[0] ? `error: ${r.errors[0]}` : r.rows} |`,
    );
  }
  return lines.join('\n');
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  const started = new Date();
  const load = os.loadavg();
  const sections: string[] = [];
  for (const engine of ENGINES) {
    const url = databaseUrl(engine, args['postgres-url']!);
    const loadSeconds = await prepare(engine, url);
    const version = await engineVersion(url);
    const fixture = await fixtureFrom(url);
    const { base: server, child } = await startServer(url);
    try {
      const login = await fetch(`${server}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(OWNER),
      });
      if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
      const { token } = (await login.json()) as { token: string };
      const results = await measure(server, token, fixture, Date.now() + MEASURE_DEADLINE_MS);
      sections.push(table(engine === 'sqlite' ? 'SQLite' : 'PostgreSQL', version, loadSeconds, results));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  const machine = [
    `Date: ${started.toISOString()}`,
    `Command: npm run bench -- --leads ${LEADS} ${SHAPE.join(' ')} --engines ${ENGINES.join(',')} --runs ${RUNS}${args.reuse ? ' --reuse' : ''}${args.only ? ` --only "${args.only}"` : ''}`,
    `Machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}`,
    `Node ${process.version}; load average at start ${load.map((x) => x.toFixed(2)).join(' ')}, at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
    `Each query: ${WARMUP} warm-up requests, then ${RUNS} measured one after another over HTTP keep-alive (latency seen by the client).`,
  ];
  const report = [...machine, '', ...sections].join('\n');
  const out = path.join(WORK, `results-${started.toISOString().replace(/[:.]/g, '-')}.md`);
  writeFileSync(out, report + '\n');
  console.log(report);
  log(`written to ${out}${existsSync(out) ? '' : ' (failed)'}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
