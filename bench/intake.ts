// Intake benchmark: the real server (built, in its own process) takes leads over HTTP from
// autocannon and delivers each to a local partner process answering in 0 ms, then in 50 ms.
// Two measurements per partner delay and engine:
//   1. throughput: as many leads as 64 connections can push for --seconds (leads/s, and how many
//      were delivered: every lead goes all the way to the partner and back);
//   2. latency at a steady --rate below saturation: p50/p99 of the intake answer; Leadgate's own
//      added latency is that minus the partner's delay.
// See bench/README.md.
//
//   npm run bench:intake -- [--engines sqlite,postgres] [--seconds 20] [--rate 500]
//                           [--postgres-url postgres://postgres@127.0.0.1:55432/postgres]
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WORK = path.join(os.tmpdir(), 'leadgate-bench-intake');
const PG_DATABASE = 'leadgate_bench_intake';
const OWNER = { email: 'bench@example.com', password: 'bench-password-123' };

const { values: args } = parseArgs({
  options: {
    engines: { type: 'string', default: 'sqlite,postgres' },
    seconds: { type: 'string', default: '20' },
    rate: { type: 'string', default: '500' },
    connections: { type: 'string', default: '64' },
    delays: { type: 'string', default: '0,50' },
    'log-level': { type: 'string', default: 'info' },
    'postgres-url': { type: 'string', default: process.env.BENCH_POSTGRES_URL || process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:55432/postgres' },
  },
});
const SECONDS = Math.min(120, Math.max(3, Number(args.seconds)));
const RATE = Math.min(5000, Math.max(10, Number(args.rate)));
const CONNECTIONS = Math.min(256, Math.max(1, Number(args.connections)));
const DELAYS = args.delays!.split(',').map(Number);
const ENGINES = args.engines!.split(',').map((e) => e.trim());
for (const e of ENGINES) if (e !== 'sqlite' && e !== 'postgres') throw new Error(`unknown engine ${e}`);

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
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function startPartner(delayMs: number): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = fork(path.join(ROOT, 'bench/partner.ts'), [String(port), String(delayMs)], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`partner exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/leads`, child };
}

async function databaseUrl(engine: string): Promise<string> {
  if (engine === 'sqlite') {
    rmSync(path.join(WORK, 'sqlite'), { recursive: true, force: true });
    mkdirSync(path.join(WORK, 'sqlite'), { recursive: true });
    return `sqlite:${path.join(WORK, 'sqlite', 'leadgate.db')}`;
  }
  const admin = new pg.Client({ connectionString: args['postgres-url'] });
  await admin.connect();
  await admin.query(`drop database if exists ${PG_DATABASE} with (force)`);
  await admin.query(`create database ${PG_DATABASE}`);
  await admin.end();
  const url = new URL(args['postgres-url']!);
  url.pathname = `/${PG_DATABASE}`;
  return url.toString();
}

async function startServer(dbUrl: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  // BENCH_PROFILE=dir: write a CPU profile of the server (for finding where the time goes).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, 'dist/server/main.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: args['log-level'],
      LEADGATE_ADMIN_EMAIL: OWNER.email,
      LEADGATE_ADMIN_PASSWORD: OWNER.password,
    },
    stdio: ['ignore', 'ignore', 'inherit'], // a production server writes its log lines somewhere: here, nowhere
  });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error('server did not start within 60 s');
    const ok = await fetch(`${base}/api/health`).then((r) => r.ok, () => false);
    if (ok) return { base, child };
    await new Promise((r) => setTimeout(r, 200));
  }
}

let serial = 0;
function leadBody(runTag: string) {
  const n = ++serial;
  return JSON.stringify({
    first_name: 'Bench',
    last_name: `Lead${n}`,
    email: `bench.${runTag}.${n}@example.com`,
    phone: `+4915${String(100_000_000 + ((n * 7_919) % 899_999_999)).slice(0, 9)}`,
    country: 'DE',
    ip: '198.51.100.10',
    sub_id1: 'bench',
  });
}

interface Run {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  delivered: number;
  statuses: Record<string, number>;
}

function cannon(base: string, token: string, tag: string, opts: { connections: number; seconds: number; rate?: number }): Promise<Run> {
  const statuses: Record<string, number> = {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `${base}/api/intake/leads`,
        connections: opts.connections,
        duration: opts.seconds,
        ...(opts.rate ? { overallRate: opts.rate } : {}),
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
            setupRequest: (req: any) => ({ ...req, body: leadBody(tag) }),
            onResponse: (status: number, body: string) => {
              let s = `http_${status}`;
              if (status === 201) s = /"status":"(\w+)"/.exec(body)?.[1] ?? s;
              statuses[s] = (statuses[s] ?? 0) + 1;
            },
          },
        ],
      } as any,
      (err: Error | null, r: any) => {
        if (err) return reject(err);
        resolve({
          requests: r.requests.total,
          perSecond: r.requests.total / opts.seconds,
          p50: r.latency.p50,
          p99: r.latency.p99,
          errors: r.errors,
          non2xx: r.non2xx,
          delivered: statuses.delivered ?? 0,
          statuses,
        });
      },
    );
    void instance;
  });
}

async function benchEngine(engine: string) {
  const out: string[] = [];
  for (const delay of DELAYS) {
    const dbUrl = await databaseUrl(engine);
    const partner = await startPartner(delay);
    const server = await startServer(dbUrl);
    try {
      const token = (await json(server.base, 'POST', '/api/auth/login', OWNER)).token;
      const p = await json(server.base, 'POST', '/api/partners', { name: 'Bench partner', integration: {
        url: partner.url, headers: { 'X-Api-Key': 'bench-key-123456' },
        body_template: { first: '{{lead.first_name}}', last: '{{lead.last_name}}', email: '{{lead.email}}', phone: '{{lead.phone}}', country: '{{lead.country}}', ip: '{{lead.ip}}', click: '{{lead.id}}' },
        success_path: 'success', lead_id_path: 'data.id', autologin_path: 'data.autologin_url', timeout_ms: 5000,
      } }, token);
      const flow = await json(server.base, 'POST', '/api/flows', { name: 'Bench flow', targets: [{ partner_id: p.id, priority: 1 }] }, token);
      const provider = await json(server.base, 'POST', '/api/traffic-providers', { name: 'Bench provider' }, token);
      await json(server.base, 'POST', '/api/campaigns', { name: 'Bench campaign', traffic_provider_id: provider.id, flow_id: flow.id, payout: { model: 'cpl', amount: 10 } }, token);

      log(`${engine}, partner ${delay} ms: warm-up`);
      await cannon(server.base, provider.token, `w${delay}`, { connections: 8, seconds: 3 });
      log(`${engine}, partner ${delay} ms: throughput, ${CONNECTIONS} connections, ${SECONDS} s`);
      const max = await cannon(server.base, provider.token, `t${delay}`, { connections: CONNECTIONS, seconds: SECONDS });
      log(`${engine}, partner ${delay} ms: latency at ${RATE} leads/s, ${SECONDS} s`);
      const steady = await cannon(server.base, provider.token, `l${delay}`, { connections: CONNECTIONS, seconds: SECONDS, rate: RATE });
      const row = [
        engine, `${delay} ms`,
        `${max.perSecond.toFixed(0)}`, `${max.delivered}/${max.requests}`, `${max.p99} ms`,
        `${RATE}`, `${steady.p50} ms`, `${steady.p99} ms`, `${Math.max(0, steady.p99 - delay)} ms`,
        `${max.errors + steady.errors} / ${max.non2xx + steady.non2xx}`,
      ];
      out.push(`| ${row.join(' | ')} |`);
      log(out.at(-1), JSON.stringify({ max: max.statuses, steady: steady.statuses }));
    } finally {
      server.child.kill('SIGTERM');
      partner.child.kill('SIGTERM');
      await new Promise((r) => server.child.once('exit', r));
    }
  }
  return out;
}

const lines: string[] = [];
for (const engine of ENGINES) lines.push(...(await benchEngine(engine)));
console.log(`\nMachine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, LOG_LEVEL=${args['log-level']}`);
console.log('| engine | partner | max leads/s | delivered | p99 at max | steady rate | p50 | p99 | added p99 | errors / non-2xx |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const l of lines) console.log(l);
