// Exports under load (issue 12): while several operators download every lead as CSV
// (GET /api/leads/export), how long do lead intake and a Leads-table search take, and how much
// memory does the server use? See bench/README.md ("Exports under load").
//
//   npx tsx bench/exports.ts [--leads 1000000] [--engines sqlite,postgres] [--exports 4]
//                            [--seconds 10] [--reuse] [--export-minutes 20] [--postgres-url postgres://…]
//                            [--export-query date_from=2026-09-01]
//
// Per engine: the demo data (scripts/demo-data.ts, in the same place bench/run.ts keeps it, so
// --reuse shares it), the real server (built, dist/server/main.js, EXPORT_CONCURRENCY = --exports) in
// its own process, then two phases with the same clients:
//   idle     --seconds of intake and search alone;
//   exports  --exports full exports at once, each read as fast as the client can, while intake
//            and search go on, until every export has ended.
// Intake: one lead after another (closed loop) to POST /api/intake/leads, for a campaign without
// a flow (stored, not routed: the database path, no partner call). Search: one after another,
// GET /api/leads/search?limit=50&status=delivered. Server RSS is read from /proc every 100 ms.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { databaseUrl, loadFreshDemoData, WORK, type Engine } from './data.js';
import { OWNER, startServer } from './server.js';

const { values: args } = parseArgs({
  options: {
    leads: { type: 'string', default: '1000000' },
    engines: { type: 'string', default: 'sqlite,postgres' },
    exports: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '10' },
    reuse: { type: 'boolean', default: false },
    'export-minutes': { type: 'string', default: '20' },
    // The export's filters (its query string): a slice of a large database, as operators export.
    'export-query': { type: 'string', default: '' },
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
const EXPORTS = Math.min(16, Math.max(1, Number(args.exports)));
const SECONDS = Math.min(120, Math.max(3, Number(args.seconds)));
const ENGINES = args.engines!.split(',').map((e) => e.trim()) as Engine[];
// How long one export may take before the run fails (a busy machine needs more).
const EXPORT_DEADLINE_MS = Math.min(120, Math.max(1, Number(args['export-minutes']))) * 60_000;
if (!Number.isInteger(LEADS) || LEADS < 1000) throw new Error('--leads must be a whole number of at least 1000');

const log = (...a: unknown[]) => console.error('[bench:exports]', ...a);

async function prepare(engine: Engine, url: string): Promise<string> {
  if (args.reuse) return 'reused from the previous run';
  log(`${engine}: loading ${LEADS.toLocaleString('en-US')} demo leads`);
  return `loaded in ${(await loadFreshDemoData(engine, url, LEADS, args['postgres-url']!)).toFixed(0)} s`;
}

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};

interface Phase {
  name: string;
  seconds: number;
  intake: number[];
  search: number[];
  errors: string[];
  rssPeakMb: number;
  exports: { ms: number; bytes: number; status: number }[];
}

async function phase(
  name: string,
  base: string,
  pid: number,
  token: string,
  intakeToken: string,
  campaignId: string,
  exports: number,
): Promise<Phase> {
  if (new URL(base).hostname !== '127.0.0.1') throw new Error('requests go to 127.0.0.1 only');
  const p: Phase = { name, seconds: 0, intake: [], search: [], errors: [], rssPeakMb: rssMb(pid), exports: [] };
  const rss = setInterval(() => (p.rssPeakMb = Math.max(p.rssPeakMb, rssMb(pid))), 100);
  const started = performance.now();
  let done = false;
  const downloads = Array.from({ length: exports }, async () => {
    const t0 = performance.now();
    const res = await fetch(`${base}/api/leads/export${args['export-query'] ? `?${args['export-query']}` : ''}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(EXPORT_DEADLINE_MS),
    });
    let bytes = 0;
    if (res.body) for await (const chunk of res.body) bytes += (chunk as Uint8Array).byteLength;
    p.exports.push({ ms: performance.now() - t0, bytes, status: res.status });
  });
  const all = exports
    ? Promise.all(downloads).finally(() => (done = true))
    : new Promise<void>((r) => setTimeout(() => ((done = true), r()), SECONDS * 1000));
  let serial = 0;
  const intake = (async () => {
    while (!done) {
      const k = ++serial;
      const t0 = performance.now();
      const res = await fetch(`${base}/api/intake/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${intakeToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          first_name: 'Bench',
          last_name: `Lead${k}`,
          email: `bench.${name}.${Date.now()}.${k}@example.com`,
          phone: `+49151${String(10_000_000 + ((Date.now() + k) % 89_999_999))}`,
          country: 'DE',
          ip: '203.0.113.7',
          campaign_id: campaignId,
        }),
      });
      await res.text();
      if (res.status !== 201) p.errors.push(`intake ${res.status}`);
      else p.intake.push(performance.now() - t0);
    }
  })();
  const search = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${base}/api/leads/search?limit=50&status=delivered`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await res.text();
      if (res.status !== 200) p.errors.push(`search ${res.status}`);
      else p.search.push(performance.now() - t0);
    }
  })();
  await all;
  await Promise.all([intake, search]);
  clearInterval(rss);
  p.seconds = (performance.now() - started) / 1000;
  return p;
}

async function api(base: string, token: string, method: string, url: string, body: unknown) {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, any>;
}

function row(engine: string, p: Phase) {
  const f = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(0));
  const ex = p.exports.length
    ? `${p.exports.length}× ${(p.exports[0].bytes / 1e6).toFixed(0)} MB in ${f(Math.min(...p.exports.map((e) => e.ms)) / 1000)}–${f(Math.max(...p.exports.map((e) => e.ms)) / 1000)} s` +
      (p.exports.some((e) => e.status !== 200) ? ` (statuses ${p.exports.map((e) => e.status).join(',')})` : '')
    : 'none';
  return `| ${engine} | ${p.name} | ${ex} | ${p.seconds.toFixed(0)} s | ${p.intake.length} | ${f(percentile(p.intake, 50))} | ${f(percentile(p.intake, 99))} | ${f(Math.max(...p.intake))} | ${p.search.length} | ${f(percentile(p.search, 50))} | ${f(percentile(p.search, 99))} | ${f(Math.max(...p.search))} | ${f(p.rssPeakMb)} MB | ${p.errors.length} |`;
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  const started = new Date();
  const load = os.loadavg();
  const rows: string[] = [];
  const notes: string[] = [];
  for (const engine of ENGINES) {
    const url = databaseUrl(engine, args['postgres-url']!);
    notes.push(`${engine}: ${LEADS.toLocaleString('en-US')} leads ${await prepare(engine, url)}`);
    const { base, child } = await startServer(url, { EXPORT_CONCURRENCY: String(EXPORTS) });
    try {
      const login = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(OWNER),
      });
      if (login.status !== 200) throw new Error(`login failed: ${login.status} ${await login.text()}`);
      const { token } = (await login.json()) as { token: string };
      const provider = await api(base, token, 'POST', '/api/traffic-providers', {
        name: `Bench exports ${Date.now()}`,
      });
      const campaign = await api(base, token, 'POST', '/api/campaigns', {
        name: `Bench exports ${Date.now()}`,
        traffic_provider_id: provider.id,
        flow_id: null,
        payout: { model: 'cpl', amount: 1 },
      });
      for (const [name, n] of [
        ['idle', 0],
        ['exports', EXPORTS],
      ] as const) {
        log(`${engine}: phase ${name}`);
        const p = await phase(name, base, child.pid!, token, provider.token, campaign.id, n);
        log(row(engine, p));
        rows.push(row(engine, p));
      }
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }
  const report = [
    `Date: ${started.toISOString()}`,
    `Command: npx tsx bench/exports.ts --leads ${LEADS} --engines ${ENGINES.join(',')} --exports ${EXPORTS} --seconds ${SECONDS}${args.reuse ? ' --reuse' : ''}${args['export-query'] ? ` --export-query ${args['export-query']}` : ''}`,
    `Machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; Node ${process.version}`,
    `Load average at start ${load.map((x) => x.toFixed(2)).join(' ')}, at end ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
    ...notes,
    '',
    '| engine | phase | exports | phase time | intakes | intake p50 ms | intake p99 ms | intake max ms | searches | search p50 ms | search p99 ms | search max ms | server RSS peak | errors |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows,
  ].join('\n');
  const out = path.join(WORK, `exports-${started.toISOString().replace(/[:.]/g, '-')}.md`);
  writeFileSync(out, report + '\n');
  console.log(report);
  log(`written to ${out}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
