// The traffic-provider portal's reads (issue 27): a provider's lead search and its statistics at
// N leads spread evenly over P providers (default 1,000,000 over 50), on SQLite and PostgreSQL,
// through the real server over HTTP with a portal user's session, p50/p95 per query.
//
//   npx tsx bench/portal.ts [--leads 1000000] [--providers 50] [--engines sqlite,postgres] [--runs 50]
//                           [--postgres-url postgres://postgres@127.0.0.1:55432/postgres] [--reuse]
//
// Per engine: a fresh database (a file under $TMPDIR/leadgate-bench/portal-sqlite/, or the
// PostgreSQL database leadgate_bench_portal), migrated, then P providers (2 campaigns each: CPL
// and CPA; sale statuses shown, a 48 h FTD hold) and N leads over the last 90 days inserted in
// chunks (the rollup triggers run as in production); --reuse measures again on the database an
// earlier run seeded with the same --leads and --providers, when it is there. Bounds: requests to 127.0.0.1 only, 10 s
// each, 3 errors per query, 15 minutes of measuring per engine; the server is stopped at the end.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { hashSecret } from '../src/server/auth/credentials.js';
import { openDatabase, type DB } from '../src/server/db/database.js';
import { newId } from '../src/server/db/ids.js';
import { migrate } from '../src/server/db/migrate.js';
import { sql, type Insertable } from 'kysely';
import type { LeadStatus, LeadsTable } from '../src/server/db/tables.js';
import { WORK } from './data.js';
import { OWNER, startServer } from './server.js';

const WARMUP = 3;
const REQUEST_TIMEOUT_MS = 10_000;
const MEASURE_DEADLINE_MS = 15 * 60_000;
const TARGET_MS = 50;
const DAY = 86_400_000;

const { values: args } = parseArgs({
  options: {
    leads: { type: 'string', default: '1000000' },
    providers: { type: 'string', default: '50' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '50' },
    reuse: { type: 'boolean', default: false },
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
const PROVIDERS = Number(args.providers);
const RUNS = Math.min(200, Math.max(5, Number(args.runs)));
const ENGINES = args.engines!.split(',').map((e) => e.trim());
if (!Number.isInteger(LEADS) || LEADS < 1000 || LEADS > 5_000_000) throw new Error('--leads: 1000 to 5,000,000');
if (!Number.isInteger(PROVIDERS) || PROVIDERS < 1 || PROVIDERS > 1000) throw new Error('--providers: 1 to 1000');
for (const e of ENGINES) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`unknown engine ${e}`);
const log = (...a: unknown[]) => console.error('[bench:portal]', ...a);

const STATUSES: LeadStatus[] = ['delivered', 'delivered', 'delivered', 'rejected', 'duplicate', 'failed'];
const COUNTRIES = ['DE', 'AT', 'CH', 'FR', 'IT', 'ES', 'PL', 'NL'];
const WORDS = ['New', 'No Answer', 'Call back', 'Not interested', 'Deposited'];

function databaseUrl(engine: string): string {
  if (engine === 'sqlite') return `sqlite:${path.join(WORK, 'portal-sqlite', 'leadgate.db')}`;
  const url = new URL(args['postgres-url']!);
  url.pathname = '/leadgate_bench_portal';
  return url.toString();
}

/** With --reuse: the seeded ids of an earlier run's database of the same size, if there is one. */
async function seeded(url: string): Promise<{ providerId: string; campaignId: string } | null> {
  if (!args.reuse || (url.startsWith('sqlite:') && !existsSync(url.slice('sqlite:'.length)))) return null;
  let db: DB;
  try {
    db = open(url);
    await db.selectFrom('leads').select('id').limit(1).execute();
  } catch {
    return null;
  }
  try {
    const providers = await db
      .selectFrom('traffic_providers')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirst();
    const leads = await db
      .selectFrom('leads')
      .select(sql<number>`count(*)`.as('n'))
      .executeTakeFirst();
    if (Number(providers?.n) !== PROVIDERS || Number(leads?.n) !== LEADS) return null;
    const p = await db
      .selectFrom('traffic_providers')
      .select('id')
      .where('name', '=', 'Bench provider 1')
      .executeTakeFirst();
    const c = p && (await db.selectFrom('campaigns').select('id').where('name', '=', 'Bench CPA 1').executeTakeFirst());
    return p && c ? { providerId: p.id, campaignId: c.id } : null;
  } finally {
    await db.destroy();
  }
}

/** A fresh, migrated database for `engine`; its URL. */
async function freshDatabase(engine: string): Promise<string> {
  if (engine === 'sqlite') {
    const dir = path.join(WORK, 'portal-sqlite');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return `sqlite:${path.join(dir, 'leadgate.db')}`;
  }
  const admin = new pg.Client({ connectionString: args['postgres-url'] });
  await admin.connect();
  await admin.query('drop database if exists leadgate_bench_portal');
  await admin.query('create database leadgate_bench_portal');
  await admin.end();
  return databaseUrl(engine);
}

const open = (url: string): DB =>
  url.startsWith('sqlite:')
    ? openDatabase({ engine: 'sqlite', file: url.slice('sqlite:'.length) })
    : openDatabase({ engine: 'postgres', url });

/** P providers with two campaigns each, and N leads round-robin over them; returns provider 0's id. */
async function seed(url: string): Promise<{ providerId: string; campaignId: string }> {
  const db = open(url);
  try {
    await migrate(db);
    const now = new Date().toISOString();
    const providers: { id: string; campaigns: string[] }[] = [];
    for (let p = 0; p < PROVIDERS; p++) {
      const id = newId();
      await db
        .insertInto('traffic_providers')
        .values({
          id,
          name: `Bench provider ${p + 1}`,
          status: 'active',
          token_id: newId().replace(/-/g, '').slice(-12),
          token_hash: hashSecret(`bench-${p}`),
          allowed_ips: '[]',
          duplicate_policy: JSON.stringify({ fields: ['email'], window_hours: 720, scope: 'provider' }),
          created_at: now,
          updated_at: now,
          archived_at: null,
          portal_sale_status: 1,
          ftd_hold_hours: 48,
          sale_status_map: JSON.stringify({
            deposited: 'converted',
            'call back': 'callback',
            'no answer': 'no_answer',
          }),
        })
        .execute();
      const campaigns = [];
      for (const model of ['cpl', 'cpa']) {
        const cid = newId();
        await db
          .insertInto('campaigns')
          .values({
            id: cid,
            name: `Bench ${model.toUpperCase()} ${p + 1}`,
            status: 'active',
            traffic_provider_id: id,
            flow_id: null,
            countries: '[]',
            payout: JSON.stringify({ model, amount_cents: model === 'cpl' ? 1500 : 30000, currency: 'USD' }),
            created_at: now,
            updated_at: now,
            archived_at: null,
          })
          .execute();
        campaigns.push(cid);
      }
      providers.push({ id, campaigns });
    }
    const started = Date.now();
    const CHUNK = 500;
    let rnd = 12345;
    const random = () => (rnd = (rnd * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < LEADS; i += CHUNK) {
      const rows: Insertable<LeadsTable>[] = [];
      for (let j = i; j < Math.min(LEADS, i + CHUNK); j++) {
        const pr = providers[j % PROVIDERS];
        const created = Date.now() - Math.floor(random() * 90 * DAY);
        const status = STATUSES[Math.floor(random() * STATUSES.length)];
        const cpa = random() < 0.5;
        const ftd = status === 'delivered' && random() < 0.08;
        const createdAt = new Date(created).toISOString();
        rows.push({
          id: newId(),
          created_at: createdAt,
          first_name: 'Bench',
          last_name: `Lead${j}`,
          email: `lead${j}@bench.test`,
          phone: `+4915${String(j).padStart(9, '0')}`,
          country: COUNTRIES[Math.floor(random() * COUNTRIES.length)],
          ip: '203.0.113.7',
          language: null,
          funnel: null,
          sub_id1: `cr${Math.floor(random() * 40)}`,
          sub_id2: `pub${Math.floor(random() * 500)}`,
          sub_id3: `click-${j}`,
          sub_id4: null,
          sub_id5: null,
          traffic_provider_id: pr.id,
          campaign_id: pr.campaigns[cpa ? 1 : 0],
          flow_id: null,
          partner_id: null,
          status,
          reason: status === 'rejected' ? 'Partner X: no' : null,
          partner_lead_id: null,
          sale_status: status === 'delivered' ? (ftd ? 'Deposited' : WORDS[Math.floor(random() * 4)]) : null,
          autologin_url: null,
          delivered_at: status === 'delivered' ? createdAt : null,
          ftd_at: ftd ? new Date(Math.min(Date.now(), created + Math.floor(random() * 5 * DAY))).toISOString() : null,
          status_updated_at: createdAt,
          cost_cents: status === 'delivered' ? (cpa ? (ftd ? 30000 : 0) : 1500) : 0,
          revenue_cents: 0,
        });
      }
      await db.transaction().execute((tx) => tx.insertInto('leads').values(rows).execute());
      if ((i / CHUNK) % 200 === 0) log(`${i.toLocaleString('en-US')} leads`);
    }
    log(`${LEADS.toLocaleString('en-US')} leads in ${((Date.now() - started) / 1000).toFixed(0)} s`);
    return { providerId: providers[0].id, campaignId: providers[0].campaigns[1] };
  } finally {
    await db.destroy();
  }
}

async function json(base: string, method: string, url: string, token: string | null, body?: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

/** A portal user of the provider, signed in, its zone Europe/Berlin: its session token. */
async function portalSession(base: string, providerId: string): Promise<string> {
  const owner = (await json(base, 'POST', '/api/auth/login', null, OWNER)).token;
  const email = `portal-bench-${Date.now()}@example.test`;
  const password = 'portal-bench-password-1';
  const inv = await json(base, 'POST', `/api/traffic-providers/${providerId}/users`, owner, { email, name: 'Bench' });
  await json(base, 'POST', '/api/portal/invitations/accept', null, { token: inv.invitation_token, password });
  const token = (await json(base, 'POST', '/api/auth/login', null, { email, password })).token;
  await json(base, 'PATCH', '/api/portal/me', token, { timezone: 'Europe/Berlin' });
  return token;
}

const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
const daysAgo = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) - n * DAY).toISOString().slice(0, 10);
const range = (days: number) => `date_from=${daysAgo(days - 1)}&date_to=${today}`;

function queries(f: { campaignId: string; cursor: string; leadId: string }): [string, string][] {
  return [
    ['Leads: newest 50', '/api/portal/leads?limit=50'],
    ['Leads: last 30 days, delivered', `/api/portal/leads?limit=50&status=delivered&${range(30)}`],
    ['Leads: page 3 (cursor)', `/api/portal/leads?limit=50&status=delivered&${range(30)}&cursor=${f.cursor}`],
    ['Leads: one campaign, DE/AT', `/api/portal/leads?limit=50&campaign_id=${f.campaignId}&country=DE,AT`],
    ['Leads: sub_id1 = cr7', '/api/portal/leads?limit=50&sub_id1=cr7'],
    ['Leads: q = a sub id value (rare)', '/api/portal/leads?limit=50&q=click-4000'],
    ['Leads: q = a lead id', `/api/portal/leads?limit=50&q=${f.leadId}`],
    ['Lead detail', `/api/portal/leads/${f.leadId}`],
    ['Stats by day, 30 days', `/api/portal/stats?group_by=day&${range(30)}`],
    ['Stats by week, 90 days', `/api/portal/stats?group_by=week&${range(90)}`],
    ['Stats by month, 90 days', `/api/portal/stats?group_by=month&${range(90)}`],
    ['Stats by campaign, 30 days', `/api/portal/stats?group_by=campaign&${range(30)}`],
    ['Stats by country, 90 days', `/api/portal/stats?group_by=country&${range(90)}`],
    ['Stats by sub_id1, 30 days', `/api/portal/stats?group_by=sub_id1&${range(30)}`],
  ];
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

async function measure(base: string, token: string, qs: [string, string][]): Promise<string[]> {
  const deadline = Date.now() + MEASURE_DEADLINE_MS;
  const lines: string[] = [];
  for (const [name, url] of qs) {
    const times: number[] = [];
    const errors: string[] = [];
    for (let i = 0; i < WARMUP + RUNS && Date.now() < deadline; i++) {
      const t0 = performance.now();
      const res = await fetch(`${base}${url}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const body = await res.text();
      const ms = performance.now() - t0;
      if (res.status !== 200) {
        errors.push(`${res.status} ${body.slice(0, 120)}`);
        if (errors.length >= 3) break;
      } else if (i >= WARMUP) times.push(ms);
    }
    times.sort((a, b) => a - b);
    const [p50, p95, max] = times.length
      ? [percentile(times, 50), percentile(times, 95), times.at(-1)!]
      : [NaN, NaN, NaN];
    const verdict = Number.isNaN(p95) ? 'failed' : p95 <= TARGET_MS ? `≤ ${TARGET_MS} ✓` : `≤ ${TARGET_MS} ✗`;
    const line = `| ${name} | ${p50.toFixed(1)} | ${p95.toFixed(1)} | ${max.toFixed(1)} | ${verdict} | ${errors[0] ?? ''} |`;
    log(line);
    lines.push(line);
  }
  return lines;
}

async function main() {
  const load = os.loadavg();
  const out = [
    `Command: npx tsx bench/portal.ts --leads ${LEADS} --providers ${PROVIDERS} --engines ${ENGINES.join(',')} --runs ${RUNS}${args.reuse ? ' --reuse' : ''}`,
    `Machine: ${os.availableParallelism()} CPUs, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; Node ${process.version}; load average at start ${load.map((x) => x.toFixed(2)).join(' ')}`,
    `One provider of ${PROVIDERS} (${Math.round(LEADS / PROVIDERS).toLocaleString('en-US')} leads of ${LEADS.toLocaleString('en-US')}), its portal user's session, zone Europe/Berlin; ${WARMUP} warm-up + ${RUNS} measured requests per query.`,
  ];
  for (const engine of ENGINES) {
    let url = databaseUrl(engine);
    let ids = await seeded(url);
    if (ids) log(`${engine}: measuring again on the database seeded before`);
    else {
      url = await freshDatabase(engine);
      log(`${engine}: seeding`);
      ids = await seed(url);
    }
    const { providerId, campaignId } = ids;
    const { base, child } = await startServer(url);
    try {
      const token = await portalSession(base, providerId);
      const first = await json(base, 'GET', `/api/portal/leads?limit=50&status=delivered&${range(30)}`, token);
      const second = await json(
        base,
        'GET',
        `/api/portal/leads?limit=50&status=delivered&${range(30)}&cursor=${first.next_cursor}`,
        token,
      );
      const f = { campaignId, cursor: second.next_cursor, leadId: first.data[7].id };
      out.push(
        '',
        `### ${engine}`,
        '',
        '| Query | p50 ms | p95 ms | max ms | Target p95 | Error |',
        '|---|---:|---:|---:|---:|---|',
      );
      out.push(...(await measure(base, token, queries(f))));
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  out.push(
    '',
    `Load average at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );
  console.log(out.join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
