// Tracked autologin links (issue 28): the redirect `GET /go/{token}` at a steady pace. The real
// server (built, in its own process, rate limits off: bench/server.ts) takes --leads leads for a
// partner that tracks its links (answered by bench/partner.ts on loopback), then the links from
// the intake answers are opened at --rate requests/s for --seconds, open loop (a request leaves at
// its time whatever the earlier ones do), each link many times. Every answer must be the 302 to
// the partner's URL; each open is recorded (a row per open, the link's counters updated).
//
//   npx tsx bench/autologin.ts [--engine sqlite|postgres] [--rate 500] [--seconds 10] [--leads 2000]
//                              [--warmup 1] (seconds at the rate first, not counted: connections open)
//                              [--postgres-url postgres://postgres@127.0.0.1:55432/postgres]
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { apiCaller, benchRoute, freePort, freshPostgresDatabase, startServer } from './server.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string', default: '10' },
    leads: { type: 'string', default: '2000' },
    warmup: { type: 'string', default: '1' },
    'postgres-url': {
      type: 'string',
      default:
        process.env.BENCH_POSTGRES_URL ||
        process.env.TEST_POSTGRES_URL ||
        'postgres://postgres@127.0.0.1:55432/postgres',
    },
  },
});
const RATE = Math.min(5000, Math.max(1, Number(args.rate)));
const SECONDS = Math.min(60, Math.max(1, Number(args.seconds)));
const LEADS = Math.min(20_000, Math.max(10, Number(args.leads)));
const WARMUP = Math.min(10, Math.max(0, Number(args.warmup)));
const PG_DATABASE = 'leadgate_bench_autologin';
const log = (...a: unknown[]) => console.error('[bench:autologin]', ...a);

async function databaseUrl(dir: string): Promise<string> {
  if (args.engine === 'sqlite') return `sqlite:${path.join(dir, 'leadgate.db')}`;
  if (args.engine !== 'postgres') throw new Error(`unknown engine ${args.engine}`);
  return freshPostgresDatabase(args['postgres-url']!, PG_DATABASE);
}

/** CPU time (user + system, ms) the process has used so far (Linux /proc). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const partnerPort = await freePort();
const partner = fork(fileURLToPath(new URL('./partner.ts', import.meta.url)), [String(partnerPort), '0'], {
  execArgv: ['--import', 'tsx'],
  stdio: 'inherit',
});
await new Promise((resolve) => partner.once('message', resolve));
const dir = mkdtempSync(path.join(os.tmpdir(), 'leadgate-bench-autologin-'));
const { base, child } = await startServer(await databaseUrl(dir), {
  PARTNER_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
  LOG_LEVEL: 'warn',
});

try {
  const call = apiCaller(base);
  const { token, campaign } = await benchRoute(call, partnerPort, { name: 'Tracking partner', track_autologin: true });
  // Links are handed out under the public base URL (the host is not used: the bench opens the path).
  await call('PUT', '/api/hosting/public-url', { public_base_url: 'https://leadgate.example' }, token);
  const { provider } = await campaign('P');

  log(`${LEADS} leads in (${args.engine})…`);
  const links: string[] = [];
  for (let i = 0; i < LEADS; i += 16) {
    const batch = Array.from({ length: Math.min(16, LEADS - i) }, (_, j) => i + j);
    const answers = await Promise.all(
      batch.map((n) =>
        fetch(`${base}/api/intake/leads`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${provider.token}` },
          body: JSON.stringify({
            first_name: 'Bench',
            last_name: `Lead${n}`,
            email: `bench.autologin.${n}@example.com`,
            phone: `+49151${String(n).padStart(8, '0')}`,
            country: 'DE',
            ip: '198.51.100.10',
          }),
        }).then((r) => r.json() as Promise<{ autologin_url?: string | null }>),
      ),
    );
    for (const a of answers) {
      const link = a.autologin_url ? new URL(a.autologin_url) : null;
      if (!link || !link.pathname.startsWith('/go/')) throw new Error(`no tracked link in ${JSON.stringify(a)}`);
      links.push(link.pathname);
    }
  }

  log(`opening them at ${RATE}/s for ${WARMUP} s (warm-up, not counted), then ${SECONDS} s…`);
  const pool = new Pool(base, { connections: 64, pipelining: 1 });
  const latencies: number[] = [];
  const perSecond: number[][] = Array.from({ length: SECONDS }, () => []);
  const statuses: Record<string, number> = {};
  let wrongTarget = 0;
  const total = RATE * SECONDS;
  const warm = RATE * WARMUP;
  let cpuBefore = cpuMs(child.pid!);
  let start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = -warm; i < total; i++) {
    if (i === 0) {
      await Promise.all(inFlight.splice(0));
      cpuBefore = cpuMs(child.pid!);
      start = performance.now();
    }
    const wait = start + ((i < 0 ? i + warm : i) * 1000) / RATE - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const sent = performance.now();
    const counted = i >= 0;
    inFlight.push(
      pool
        .request({ method: 'GET', path: links[(i + warm) % links.length], headers: { 'user-agent': 'bench' } })
        .then(async (res) => {
          await res.body.dump();
          if (!counted) return;
          const ms = performance.now() - sent;
          latencies.push(ms);
          perSecond[Math.min(SECONDS - 1, Math.floor((sent - start) / 1000))].push(ms);
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
          if (res.statusCode === 302 && !String(res.headers.location).startsWith('https://broker.example/a/'))
            wrongTarget++;
        })
        .catch(() => {
          statuses.error = (statuses.error ?? 0) + 1;
        }),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - start) / 1000;
  const cpu = cpuMs(child.pid!) - cpuBefore;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number, l = latencies) => l[Math.min(l.length - 1, Math.ceil(q * l.length) - 1)];
  const seconds = perSecond.map((l) =>
    at(
      0.99,
      l.sort((a, b) => a - b),
    ).toFixed(0),
  );
  log(`p99 per second of the run (ms): ${seconds.join(', ')}`);
  const detail = await call('GET', `/api/leads/search?limit=1&autologin_opened=true&total=true`, undefined, token);

  console.log(`| Engine | Requests | Rate reached | Answers | p50 | p99 | max | Server CPU per open | Leads opened |`);
  console.log(`|---|---:|---:|---|---:|---:|---:|---:|---:|`);
  console.log(
    `| ${args.engine} | ${total} | ${(total / elapsed).toFixed(0)}/s | ${JSON.stringify(statuses)}${wrongTarget ? `, ${wrongTarget} to a wrong place` : ''} | ` +
      `${at(0.5).toFixed(1)} ms | ${at(0.99).toFixed(1)} ms | ${latencies.at(-1)!.toFixed(1)} ms | ` +
      `${(cpu / total).toFixed(2)} ms | ${detail.total.count} of ${LEADS} |`,
  );
  if (statuses[302] !== total || wrongTarget) process.exitCode = 1;
} finally {
  child.kill('SIGTERM');
  partner.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
