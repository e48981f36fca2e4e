// Intake benchmark: the real server (built, in its own process) takes leads over HTTP from
// autocannon and delivers each to a local partner process answering in 0 ms, then in 50 ms.
// Two measurements per partner delay and engine:
//   1. throughput: as many leads as 64 connections can push for --seconds (leads/s, and how many
//      were delivered: every lead goes all the way to the partner and back);
//   2. latency at steady --rates below saturation (an even, open-loop pace; see paced()).
// Latency is the server's own (responseTime in its request log: request received → answer sent,
// the partner call included); Leadgate's added latency is that minus the partner's delay. The
// client's view (autocannon) is shown beside it: on a 2-core machine it includes the load
// generator's own queueing.
// See bench/README.md.
//
//   npm run bench:intake -- [--engines sqlite,postgres] [--seconds 20] [--rates 250,500]
//                           [--processes 1,2,3] [--outbox none,subscribed,webhooks]
//                           [--postgres-url postgres://postgres@127.0.0.1:55432/postgres]
//                           [--quality none,plain,full] [--database-url URL (an existing database, used as it is)]
// --processes: on PostgreSQL, also with that many server processes on the one database, the load
// spread over them evenly (round-robin); SQLite is measured with one.
// --outbox webhooks: two webhooks and the provider's postbacks subscribed to every lead event
// (answered by the bench partner process), so every lead writes two events and six deliveries,
// and the server sends them while
// it takes leads; subscribed: the same, with dispatch off (what writing the outbox costs intake);
// none: no subscription (the outbox's cost is then one index probe per change).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { freshPostgresDatabase } from './server.js';
import { Pool } from 'undici';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = path.join(os.tmpdir(), 'leadgate-bench-intake');
const PG_DATABASE = 'leadgate_bench_intake';
const OWNER = { email: 'bench@example.com', password: 'bench-password-123' };

const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    seconds: { type: 'string', default: '20' },
    rates: { type: 'string', default: '250,500' },
    connections: { type: 'string', default: '64' },
    delays: { type: 'string', default: '0,50' },
    processes: { type: 'string', default: '1' },
    outbox: { type: 'string', default: 'none' },
    'log-level': { type: 'string', default: 'info' },
    quality: { type: 'string', default: 'none' },
    // An existing database to take the leads into, as it is (e.g. 10,000,000 demo leads made by
    // npm run bench -- --reuse …): what a full lead table costs intake. One engine: its own.
    'database-url': { type: 'string' },
    'postgres-url': {
      type: 'string',
      default:
        process.env.BENCH_POSTGRES_URL ||
        process.env.TEST_POSTGRES_URL ||
        'postgres://postgres@127.0.0.1:55432/postgres',
    },
  },
});
const SECONDS = Math.min(120, Math.max(3, Number(args.seconds)));
const RATES = args
  .rates!.split(',')
  .filter(Boolean)
  .map((r) => {
    // The most the server takes is always measured after the rates: "max" is not one of them.
    if (!/^\d+$/.test(r.trim())) {
      console.error(`--rates: "${r}" is not a number of leads per second (the max-load run always follows the rates)`);
      process.exit(2);
    }
    return Math.min(5000, Math.max(10, Number(r)));
  });
const CONNECTIONS = Math.min(256, Math.max(1, Number(args.connections)));
const DELAYS = args.delays!.split(',').map(Number);
const ENGINES = args.engines!.split(',').map((e) => e.trim());
const PROCESSES = args.processes!.split(',').map((n) => Math.min(8, Math.max(1, Number(n))));
const OUTBOX = args.outbox!.split(',').map((o) => o.trim());
for (const o of OUTBOX)
  if (!['none', 'webhooks', 'subscribed'].includes(o))
    throw new Error(`unknown --outbox ${o}: none, subscribed or webhooks`);
for (const e of ENGINES) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`unknown engine ${e}`);
// --quality (issue 29): none: every lead from one IP and domain, as measured before; plain: each lead
// its own IP and one of 1,000 email domains, nothing configured; full: the same, with 10,000
// blocklist entries and velocity limits on every kind. BENCH_SERVER_ROOT: the checkout whose
// built server is measured (an older commit's, for a before/after pair).
const QUALITY = args.quality!;
if (!['none', 'plain', 'full'].includes(QUALITY)) throw new Error(`unknown --quality ${QUALITY}: none, plain or full`);
const SERVER_ROOT = process.env.BENCH_SERVER_ROOT || ROOT;

const log = (...a: unknown[]) => console.error('[bench:intake]', ...a);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

async function json(base: string, method: string, p: string, body?: unknown, token?: string): Promise<any> {
  const res = await fetch(base + p, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function startPartner(delayMs: number): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(path.join(ROOT, 'bench/partner.ts'), [String(port), String(delayMs)], {
    execArgv: ['--import', 'tsx'],
    stdio: 'inherit',
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`partner exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/leads`, child };
}

async function databaseUrl(engine: string): Promise<string> {
  const given = args['database-url'];
  if (given) {
    if (given.startsWith('sqlite:') !== (engine === 'sqlite'))
      throw new Error(`--database-url ${given} is not a ${engine} database (pass --engines to match)`);
    return given;
  }
  if (engine === 'sqlite') {
    rmSync(path.join(WORK, 'sqlite'), { recursive: true, force: true });
    mkdirSync(path.join(WORK, 'sqlite'), { recursive: true });
    return `sqlite:${path.join(WORK, 'sqlite', 'leadgate.db')}`;
  }
  return freshPostgresDatabase(args['postgres-url']!, PG_DATABASE);
}

async function startServer(
  dbUrl: string,
  logFile: string,
  extraEnv: Record<string, string> = {},
): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  // BENCH_PROFILE=dir: write a CPU profile of the server (for finding where the time goes).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, 'dist/server/main.js'], {
    cwd: SERVER_ROOT,
    env: {
      // As `npm start` runs it (package.json): glibc's malloc arenas capped at 2 unless set.
      MALLOC_ARENA_MAX: '2',
      ...process.env,
      DATABASE_URL: dbUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: args['log-level'],
      LEADGATE_ADMIN_EMAIL: OWNER.email,
      LEADGATE_ADMIN_PASSWORD: OWNER.password,
      // The bench partner listens on loopback, which the outbound guard refuses by default;
      // the bench drives more requests than the default rate limits allow.
      PARTNER_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
      RATE_LIMIT_PER_KEY: '0',
      RATE_LIMIT_PER_IP: '0',
      ...extraEnv,
    },
    // Its request log is where the server's own latency comes from (responseTime per request).
    stdio: ['ignore', openSync(logFile, 'w'), 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('server did not start within 60 s');
    const ok = await fetch(`${base}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return { base, child };
    await new Promise((r) => setTimeout(r, 200));
  }
}

let serial = 0;
function leadBody(runTag: string) {
  const n = ++serial;
  const varied = QUALITY !== 'none';
  return JSON.stringify({
    first_name: 'Bench',
    last_name: `Lead${n}`,
    email: varied ? `bench.${runTag}.${n}@d${n % 1000}.example.com` : `bench.${runTag}.${n}@example.com`,
    phone: `+49151${String(n % 100_000_000).padStart(8, '0')}`, // +49 151: a German mobile range
    country: 'DE',
    // Addresses as data: nothing is sent to them.
    ip: varied ? `193.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` : '198.51.100.10',
    sub_id1: 'bench',
  });
}

/** --quality full: 10,000 global blocklist entries of every kind (none matching a bench lead), velocity limits on every kind. */
async function qualitySetup(base: string, token: string, providerId: string) {
  const rows = ['kind,value'];
  for (let i = 0; i < 4000; i++) rows.push(`ip,100.${64 + (i >> 8)}.${i & 255}.0/24`);
  for (let i = 0; i < 3000; i++) rows.push(`email,listed.${i}@example.org`);
  for (let i = 0; i < 2000; i++) rows.push(`email_domain,spam${i}.example.net`);
  for (let i = 0; i < 1000; i++) rows.push(`sub_id,bad-source-${i}`);
  const res = await fetch(`${base}/api/blocklists/import`, {
    method: 'POST',
    headers: { 'content-type': 'text/csv', authorization: `Bearer ${token}` },
    body: rows.join('\n'),
  });
  if (res.status !== 200) throw new Error(`blocklist import: ${res.status} ${await res.text()}`);
  await json(
    base,
    'PATCH',
    `/api/traffic-providers/${providerId}`,
    { velocity: { window_minutes: 60, ip: 20, phone: 5, email_domain: 50 } },
    token,
  );
}

interface Run {
  from: number;
  to: number;
  requests: number;
  perSecond: number;
  /** As the client saw it (autocannon: send → answer). */
  clientP50: number;
  clientP99: number;
  errors: number;
  non2xx: number;
  statuses: Record<string, number>;
}

/** autocannon against every server at once, the connections shared out; their counts summed, the worst p50/p99 kept. */
async function cannon(
  bases: string[],
  token: string,
  tag: string,
  opts: { connections: number; seconds: number },
): Promise<Run> {
  const connections = Math.max(1, Math.round(opts.connections / bases.length));
  const runs = await Promise.all(
    bases.map((base, i) => cannonOne(base, token, `${tag}p${i}`, { ...opts, connections })),
  );
  const statuses: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const sum = (f: (r: Run) => number) => runs.reduce((a, r) => a + f(r), 0);
  return {
    from: Math.min(...runs.map((r) => r.from)),
    to: Math.max(...runs.map((r) => r.to)),
    requests: sum((r) => r.requests),
    perSecond: sum((r) => r.perSecond),
    clientP50: Math.max(...runs.map((r) => r.clientP50)),
    clientP99: Math.max(...runs.map((r) => r.clientP99)),
    errors: sum((r) => r.errors),
    non2xx: sum((r) => r.non2xx),
    statuses,
  };
}

function cannonOne(
  base: string,
  token: string,
  tag: string,
  opts: { connections: number; seconds: number },
): Promise<Run> {
  const statuses: Record<string, number> = {};
  const from = Date.now();
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `${base}/api/intake/leads`,
        connections: opts.connections,
        duration: opts.seconds,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            setupRequest: (req: any) => ({ ...req, body: leadBody(tag) }),
            onResponse: (status: number, body: string) => {
              let key = `http_${status}`;
              if (status === 201) key = /"status":"(\w+)"/.exec(body)?.[1] ?? key;
              statuses[key] = (statuses[key] ?? 0) + 1;
            },
          },
        ],
      } as any,
      (err: Error | null, r: any) => {
        if (err) return reject(err);
        resolve({
          from,
          to: Date.now(),
          requests: r.requests.total,
          perSecond: r.requests.total / opts.seconds,
          clientP50: r.latency.p50,
          clientP99: r.latency.p99,
          errors: r.errors,
          non2xx: r.non2xx,
          statuses,
        });
      },
    );
  });
}

/**
 * Open-loop load at an even pace: one lead every 1/rate s, whatever the answers (autocannon's
 * rate limit sends each second's quota in a burst at the start of the second, which measures
 * bursts, not a steady rate). Latency per request: sent → answer read.
 */
async function paced(bases: string[], token: string, tag: string, rate: number, seconds: number): Promise<Run> {
  const pools = bases.map((base) => new Pool(base, { connections: Math.ceil(128 / bases.length), pipelining: 1 }));
  const statuses: Record<string, number> = {};
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  const from = Date.now();
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    inFlight.push(
      pools[i % pools.length]
        .request({
          method: 'POST',
          path: '/api/intake/leads',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: leadBody(tag),
        })
        .then(async (res) => {
          const text = await res.body.text();
          latencies.push(performance.now() - sent);
          let key = `http_${res.statusCode}`;
          if (res.statusCode === 201) key = /"status":"(\w+)"/.exec(text)?.[1] ?? key;
          else non2xx++;
          statuses[key] = (statuses[key] ?? 0) + 1;
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(inFlight);
  await Promise.all(pools.map((p) => p.close()));
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.ceil(q * latencies.length) - 1)] ?? NaN;
  return {
    from,
    to: Date.now(),
    requests: total,
    perSecond: total / seconds,
    clientP50: at(0.5),
    clientP99: at(0.99),
    errors,
    non2xx,
    statuses,
  };
}

/** CPU time (user + system, ms) the process has used so far (Linux /proc). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/**
 * CPU time (ms) each PostgreSQL process (postmaster, backends, WAL writer, checkpointer, autovacuum)
 * has used so far, by pid: the bench's cluster is the only one on the machine.
 */
function postgresCpu(): Map<number, number> {
  const got = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'postgres') continue;
      got.set(Number(name), cpuMs(Number(name)));
    } catch {
      // gone meanwhile
    }
  }
  return got;
}

/** Nearest-rank percentiles of the server's own responseTime (ms) for 201 answers in [from, to]. */
function serverLatency(logFiles: string[], from: number, to: number) {
  const times: number[] = [];
  for (const line of logFiles.flatMap((f) => readFileSync(f, 'utf8').split('\n'))) {
    if (!line.includes('"responseTime"')) continue;
    const entry = JSON.parse(line) as { time: number; res?: { statusCode?: number }; responseTime: number };
    if (entry.time >= from && entry.time <= to && entry.res?.statusCode === 201) times.push(entry.responseTime);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => (times.length ? times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] : NaN);
  return { n: times.length, p50: at(0.5), p99: at(0.99) };
}

const fmt = (ms: number) => `${ms.toFixed(1)} ms`;

async function benchEngine(engine: string) {
  const out: string[] = [];
  for (const processes of engine === 'postgres' ? PROCESSES : [1]) {
    for (const delay of DELAYS)
      for (const outbox of OUTBOX) out.push(...(await benchSetup(engine, processes, delay, outbox)));
  }
  return out;
}

/** ANALYZE of the whole database (its cached plans are made again with the statistics). */
async function analyze(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('analyze');
  } finally {
    await client.end();
  }
}

/** One database, one partner, `processes` servers on them: warm-up, the steady rates, then max. */
async function benchSetup(engine: string, processes: number, delay: number, outbox: string) {
  const out: string[] = [];
  const dbUrl = await databaseUrl(engine);
  const partner = await startPartner(delay);
  const logFiles: string[] = [];
  const servers: { base: string; child: ChildProcess }[] = [];
  mkdirSync(WORK, { recursive: true }); // a PostgreSQL-only run on a fresh machine has made nothing under it yet
  try {
    // One after another: the first migrates the new database, the others find it migrated.
    for (let i = 0; i < processes; i++) {
      logFiles.push(path.join(WORK, `server-${engine}-${delay}-${i}.log`));
      // 'subscribed': the events and deliveries are written, never sent (the write cost alone).
      servers.push(
        await startServer(dbUrl, logFiles[i], outbox === 'subscribed' ? { EVENT_DISPATCH_INTERVAL_MS: '0' } : {}),
      );
    }
    const bases = servers.map((sv) => sv.base);
    const base = bases[0];
    const token = (await json(base, 'POST', '/api/auth/login', OWNER)).token;
    const p = await json(
      base,
      'POST',
      '/api/partners',
      {
        name: 'Bench partner',
        integration: {
          url: partner.url,
          headers: { 'X-Api-Key': 'bench-key-123456' },
          body_template: {
            first: '{{lead.first_name}}',
            last: '{{lead.last_name}}',
            email: '{{lead.email}}',
            phone: '{{lead.phone}}',
            country: '{{lead.country}}',
            ip: '{{lead.ip}}',
            click: '{{lead.id}}',
          },
          success_path: 'success',
          lead_id_path: 'data.id',
          autologin_path: 'data.autologin_url',
          timeout_ms: 5000,
        },
      },
      token,
    );
    const flow = await json(
      base,
      'POST',
      '/api/flows',
      { name: 'Bench flow', targets: [{ partner_id: p.id, priority: 1 }] },
      token,
    );
    const provider = await json(base, 'POST', '/api/traffic-providers', { name: 'Bench provider' }, token);
    if (QUALITY === 'full') await qualitySetup(base, token, provider.id);
    await json(
      base,
      'POST',
      '/api/campaigns',
      {
        name: 'Bench campaign',
        traffic_provider_id: provider.id,
        flow_id: flow.id,
        payout: { model: 'cpl', amount: 10 },
      },
      token,
    );
    if (outbox !== 'none') {
      const types = [
        'lead.received',
        'lead.delivered',
        'lead.rejected',
        'lead.failed',
        'lead.ftd',
        'lead.sale_status_changed',
      ];
      for (const name of ['Bench hook A', 'Bench hook B'])
        await json(
          base,
          'POST',
          '/api/webhooks',
          { name, url: `${new URL(partner.url).origin}/hook`, event_types: types },
          token,
        );
      const postbacks = types.map((event_type) => ({
        event_type,
        campaign_id: null,
        url: `${new URL(partner.url).origin}/pb?click={sub_id1}&status={status}&payout={payout}`,
      }));
      await json(base, 'PUT', `/api/traffic-providers/${provider.id}/postbacks`, { postbacks }, token);
    }

    const what = `${engine}, ${processes} process${processes > 1 ? 'es' : ''}, partner ${delay} ms, outbox ${outbox}, quality ${QUALITY}`;
    log(`${what}: warm-up`);
    await cannon(bases, provider.token, `w${delay}`, { connections: 8, seconds: 3 });
    // PostgreSQL: the tables' statistics, as a database in use has them. Without, the generic plan
    // each connection caches after five runs of a statement was made for empty tables (intake's
    // duplicate probe then scans the whole lead table) until autovacuum's first analyze, a
    // minute in or not: runs were bimodal (the database's CPU per lead 1.8 or 3.5 ms).
    if (engine === 'postgres') await analyze(dbUrl);
    const cpu = () => servers.reduce((a, sv) => a + cpuMs(sv.child.pid!), 0);
    // Latency at steady rates below saturation, then the most the servers take.
    const phases: [string, number | null][] = [
      ...RATES.map((rate): [string, number] => [`${rate}/s`, rate]),
      ['max', null],
    ];
    for (const [name, rate] of phases) {
      log(`${what}: ${name}, ${SECONDS} s${rate ? '' : `, ${CONNECTIONS} connections`}`);
      const cpuBefore = cpu();
      const pgBefore = engine === 'postgres' ? postgresCpu() : null;
      const tag = `${name}-${delay}-${processes}`;
      const run = rate
        ? await paced(bases, provider.token, tag, rate, SECONDS)
        : await cannon(bases, provider.token, tag, { connections: CONNECTIONS, seconds: SECONDS });
      const cpuPerLead = (cpu() - cpuBefore) / run.requests;
      // PostgreSQL's share (its processes, on the same cores): a process new since counts whole.
      const pgPerLead = pgBefore
        ? [...postgresCpu()].reduce((a, [pid, ms]) => a + ms - (pgBefore.get(pid) ?? 0), 0) / run.requests
        : null;
      await new Promise((r) => setTimeout(r, 300)); // the log lines of the last answers
      const own = serverLatency(logFiles, run.from, run.to);
      const delivered = run.statuses.delivered ?? 0;
      const row = [
        engine,
        String(processes),
        `${delay} ms`,
        outbox,
        name,
        run.perSecond.toFixed(0),
        `${delivered}/${run.requests}`,
        fmt(own.p50),
        fmt(own.p99),
        fmt(Math.max(0, own.p99 - delay)),
        fmt(run.clientP50),
        fmt(run.clientP99),
        `${cpuPerLead.toFixed(2)} ms`,
        `${run.errors} / ${run.non2xx}`,
        pgPerLead === null ? 'in the server' : `${pgPerLead.toFixed(2)} ms`,
      ];
      out.push(`| ${row.join(' | ')} |`);
      log(out.at(-1), JSON.stringify(run.statuses));
    }
    if (outbox === 'webhooks') {
      // How long the servers take to send what the load left waiting.
      const started = Date.now();
      const hooks = (await json(base, 'GET', '/api/webhooks', undefined, token)).data as { id: string }[];
      const waiting = async () => {
        for (const h of hooks)
          if (
            (await json(base, 'GET', `/api/webhooks/${h.id}/deliveries?state=pending&limit=1`, undefined, token)).data
              .length
          )
            return true;
        return (
          (
            await json(
              base,
              'GET',
              `/api/traffic-providers/${provider.id}/postbacks/deliveries?state=pending&limit=1`,
              undefined,
              token,
            )
          ).data.length > 0
        );
      };
      while ((await waiting()) && Date.now() - started < 300_000) await new Promise((r) => setTimeout(r, 500));
      log(`${what}: every delivery sent ${((Date.now() - started) / 1000).toFixed(1)} s after the load ended`);
    }
  } finally {
    for (const sv of servers) sv.child.kill('SIGTERM');
    partner.child.kill('SIGTERM');
    await Promise.all(
      servers.map((sv) => new Promise((r) => (sv.child.exitCode !== null ? r(null) : sv.child.once('exit', r)))),
    );
  }
  return out;
}

const lines: string[] = [];
for (const engine of ENGINES) lines.push(...(await benchEngine(engine)));
console.log(
  `\nMachine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, LOG_LEVEL=${args['log-level']}`,
);
console.log(
  '| engine | processes | partner | outbox | load | leads/s | delivered | server p50 | server p99 | added p99 | client p50 | client p99 | server CPU per lead | errors / non-2xx | database CPU per lead |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
