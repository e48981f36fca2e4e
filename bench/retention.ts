// Scheduled retention at 1,000,000 leads (issue 29, item 4): demo leads spread over --days days,
// the real server in its own process with the `retention` job every second, intake at --rate
// leads/s beside it (open loop, every lead routed to a partner on loopback). Phase 1 sets
// contacts_days (contacts of older leads purged), phase 2 then sets leads_days (older leads
// deleted); each is timed from the PUT to the last run's end, with intake's latency during it
// against a baseline before it and the server's peak RSS (sampled every 200 ms from /proc). It
// checks that the analytics of the seeded days do not move, that the leads erased are exactly the
// ones purged, and that no lead past a cutoff is left; a check that fails exits 1.
//
//   npx tsx bench/retention.ts [--engine sqlite|postgres] [--leads 1000000] [--days 365]
//     [--contacts-days 30] [--leads-days 270] [--rate 250] [--baseline-seconds 15]
//     [--max-minutes 30] [--reuse] [--postgres-url postgres://postgres@127.0.0.1:55432/postgres]
//
// SQLite: the seeded file is kept as $TMPDIR/leadgate-bench-retention/seed-N-Dd.db and copied
// for each run; --reuse takes that copy instead of generating it again (the leads age meanwhile:
// the expected counts are read from the database at the start of each phase either way).
import { fork, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { Pool } from 'undici';
import { openDatabase } from '../src/server/db/database.js';
import { apiCaller, benchRoute, freePort, freshPostgresDatabase, ROOT, startServer } from './server.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    leads: { type: 'string', default: '1000000' },
    days: { type: 'string', default: '365' },
    'contacts-days': { type: 'string', default: '30' },
    'leads-days': { type: 'string', default: '270' },
    rate: { type: 'string', default: '250' },
    'baseline-seconds': { type: 'string', default: '15' },
    'max-minutes': { type: 'string', default: '30' },
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
const ENGINE = args.engine === 'postgres' ? 'postgres' : 'sqlite';
const LEADS = Math.min(5_000_000, Math.max(1000, Number(args.leads)));
const DAYS = Math.min(3650, Math.max(2, Number(args.days)));
const CONTACTS_DAYS = Number(args['contacts-days']);
const LEADS_DAYS = Number(args['leads-days']);
const RATE = Math.min(1000, Math.max(1, Number(args.rate)));
const BASELINE_S = Math.max(1, Number(args['baseline-seconds']));
const DEADLINE = Date.now() + Number(args['max-minutes']) * 60_000;
const DAY_MS = 86_400_000;
const log = (...a: unknown[]) => console.error('[bench:retention]', ...a);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const failures: string[] = [];
const check = (ok: boolean, what: string) => {
  log(`${ok ? 'ok' : 'FAILED'}: ${what}`);
  if (!ok) failures.push(what);
};

const rssMb = (pid: number) => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
};

/** scripts/demo-data.ts: N leads over the last D days, with the project's own generator. */
async function demoData(url: string) {
  const argv = ['--import', 'tsx', 'scripts/demo-data.ts', '--leads', String(LEADS), '--days', String(DAYS)];
  await new Promise<void>((resolve, reject) => {
    const child = spawn(process.execPath, [...argv, '--database-url', url], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`demo-data exited with ${code}`))));
  });
}

// --- The data -------------------------------------------------------------------------------
const work = path.join(os.tmpdir(), 'leadgate-bench-retention');
const runDir = path.join(work, 'run');
rmSync(runDir, { recursive: true, force: true });
mkdirSync(runDir, { recursive: true });
const seedStarted = Date.now();
let url: string;
let file = '';
if (ENGINE === 'sqlite') {
  const seed = path.join(work, `seed-${LEADS}-${DAYS}d.db`);
  if (!args.reuse || !existsSync(seed)) {
    for (const f of [seed, `${seed}-wal`, `${seed}-shm`]) rmSync(f, { force: true });
    log(`seeding ${LEADS.toLocaleString('en')} demo leads over ${DAYS} days into ${seed}…`);
    await demoData(`sqlite:${seed}`);
  } else log(`reusing ${seed}`);
  file = path.join(runDir, 'leadgate.db');
  copyFileSync(seed, file);
  if (existsSync(`${seed}-wal`)) copyFileSync(`${seed}-wal`, `${file}-wal`);
  url = `sqlite:${file}`;
} else {
  url = await freshPostgresDatabase(args['postgres-url']!, 'leadgate_bench_retention');
  log(`seeding ${LEADS.toLocaleString('en')} demo leads over ${DAYS} days into PostgreSQL…`);
  await demoData(url);
}
log(`data ready in ${((Date.now() - seedStarted) / 1000).toFixed(0)} s`);

// The bench's own connection, for the expected counts and the checks.
const db = openDatabase(ENGINE === 'sqlite' ? { engine: 'sqlite', file } : { engine: 'postgres', url });
const count = async (where: ReturnType<typeof sql>) =>
  Number((await sql<{ n: number | string }>`select count(*) as n from leads where ${where}`.execute(db)).rows[0].n);
const cutoff = (days: number) => new Date(Date.now() - days * DAY_MS).toISOString();

const partnerPort = await freePort();
const partner = fork(fileURLToPath(new URL('./partner.ts', import.meta.url)), [String(partnerPort), '0'], {
  execArgv: ['--import', 'tsx'],
  stdio: 'inherit',
});
await new Promise((resolve) => partner.once('message', resolve));
const { base, child } = await startServer(url, {
  DATA_DIR: runDir,
  PARTNER_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
  RETENTION_INTERVAL_MS: '1000',
});

try {
  const call = apiCaller(base);
  const { token, campaign } = await benchRoute(call, partnerPort);
  const { provider } = await campaign('Bench live traffic');

  // The reports of the seeded days (UTC, up to yesterday: intake's leads land today).
  const day = (n: number) => new Date(Date.now() - n * DAY_MS).toISOString().slice(0, 10);
  const range = `date_from=${day(Math.min(366, DAYS + 1))}&date_to=${day(1)}&timezone=UTC`;
  const reports = async () =>
    JSON.stringify([
      await call('GET', `/api/analytics/summary?${range}`, undefined, token),
      await call('GET', `/api/analytics/report?group_by=month&then_by=country&${range}`, undefined, token),
    ]);
  const reportsBefore = await reports();

  // Intake beside, from now to the end; each latency filed under the phase it was sent in.
  const intake = new Pool(base, { connections: 32 });
  let current = 'baseline';
  const byPhase: Record<string, number[]> = {};
  const statuses: Record<string, number> = {};
  const peakRss: Record<string, number> = {};
  const sampler = setInterval(() => {
    peakRss[current] = Math.max(peakRss[current] ?? 0, rssMb(child.pid!));
  }, 200);
  let running = true;
  const inFlight = new Set<Promise<void>>();
  const beside = (async () => {
    const start = performance.now();
    for (let i = 0; running; i++) {
      const wait = start + (i * 1000) / RATE - performance.now();
      if (wait > 0) await sleep(wait);
      const sent = performance.now();
      const phaseAtSend = current;
      const done = intake
        .request({
          method: 'POST',
          path: '/api/intake/leads',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${provider.token}` },
          body: JSON.stringify({
            first_name: 'Live',
            last_name: `L${i}`,
            email: `live${i}@example.com`,
            phone: `+49 160 ${String(10_000_000 + i).slice(-8)}`,
            country: 'DE',
            ip: '198.51.100.9',
          }),
        })
        .then(async (res) => {
          await res.body.dump();
          (byPhase[phaseAtSend] ??= []).push(performance.now() - sent);
          statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        })
        .catch(() => {
          statuses.error = (statuses.error ?? 0) + 1;
        })
        .finally(() => inFlight.delete(done));
      inFlight.add(done);
    }
  })();

  log(`baseline: intake alone for ${BASELINE_S} s`);
  await sleep(BASELINE_S * 1000);

  interface Run {
    state: 'running' | 'done' | 'failed';
    started_at: string;
    finished_at: string | null;
    contacts_purged: number;
    leads_deleted: number;
    contacts_before: string | null;
    leads_before: string | null;
    error: string | null;
  }
  /** PUTs the settings, then polls every second until no run is running and two polls saw no new work. */
  const phase = async (name: string, settings: { contacts_days: number | null; leads_days: number | null }) => {
    current = name;
    const putAt = Date.now();
    const since = new Date(putAt - 1000).toISOString();
    await call('PUT', '/api/privacy/retention', settings, token);
    let runs: Run[] = [];
    let last = -1;
    let still = 0;
    let timedOut = false;
    let lastLog = 0;
    for (;;) {
      await sleep(1000);
      runs = ((await call('GET', '/api/privacy/retention', undefined, token)).runs as Run[]).filter(
        (r) => r.started_at >= since,
      );
      const doneSoFar = runs.reduce((s, r) => s + r.contacts_purged + r.leads_deleted, 0);
      const busy = runs.some((r) => r.state === 'running');
      still = !busy && runs.length > 0 && doneSoFar === last ? still + 1 : 0;
      last = doneSoFar;
      if (Date.now() - lastLog > 10_000) {
        lastLog = Date.now();
        log(
          `${name}: ${doneSoFar.toLocaleString('en')} done in ${runs.length} run(s), ${((Date.now() - putAt) / 1000).toFixed(0)} s`,
        );
      }
      if (still >= 2) break;
      if (Date.now() > DEADLINE) {
        timedOut = true;
        break;
      }
    }
    const ends = runs.map((r) => Date.parse(r.finished_at ?? r.started_at));
    const endAt = timedOut ? Date.now() : Math.max(...ends);
    current = `after ${name}`;
    const failed = runs.filter((r) => r.state === 'failed');
    if (failed.length) log(`${name}: failed runs: ${failed.map((r) => r.error).join('; ')}`);
    for (const r of [...runs].reverse())
      log(
        `${name}: run ${r.started_at} → ${r.finished_at ?? '…'} ${r.state}: ${r.contacts_purged} purged, ${r.leads_deleted} deleted`,
      );
    return {
      seconds: (endAt - putAt) / 1000,
      contacts: runs.reduce((s, r) => s + r.contacts_purged, 0),
      leads: runs.reduce((s, r) => s + r.leads_deleted, 0),
      runs,
      timedOut,
    };
  };

  // Phase 1: contacts purged.
  const erasedBefore = await count(sql`erased_at is not null`);
  const expectedPurge = await count(sql`created_at < ${cutoff(CONTACTS_DAYS)} and erased_at is null`);
  log(`phase 1: contacts_days ${CONTACTS_DAYS}; ${expectedPurge.toLocaleString('en')} leads to purge`);
  const purge = await phase('purge', { contacts_days: CONTACTS_DAYS, leads_days: null });
  log(`phase 1: ${purge.contacts.toLocaleString('en')} purged in ${purge.seconds.toFixed(0)} s`);
  const erasedAfter = await count(sql`erased_at is not null`);
  const lastContactsCutoff = purge.runs.map((r) => r.contacts_before ?? '').sort()[purge.runs.length - 1] ?? '';
  if (!purge.timedOut) {
    check(
      erasedAfter - erasedBefore === purge.contacts,
      `leads erased ${erasedBefore} → ${erasedAfter} (+${erasedAfter - erasedBefore}) = contacts purged ${purge.contacts}`,
    );
    const left = await count(sql`created_at < ${lastContactsCutoff} and erased_at is null`);
    check(left === 0, `${left} leads older than the last run's contacts cutoff ${lastContactsCutoff} not erased`);
  }
  current = 'between';
  await sleep(5000);

  // Phase 2: leads deleted.
  const expectedDelete = await count(sql`created_at < ${cutoff(LEADS_DAYS)}`);
  log(`phase 2: leads_days ${LEADS_DAYS}; ${expectedDelete.toLocaleString('en')} leads to delete`);
  const deletion = purge.timedOut
    ? null
    : await phase('delete', { contacts_days: CONTACTS_DAYS, leads_days: LEADS_DAYS });
  if (deletion) {
    log(`phase 2: ${deletion.leads.toLocaleString('en')} deleted in ${deletion.seconds.toFixed(0)} s`);
    const lastLeadsCutoff = deletion.runs.map((r) => r.leads_before ?? '').sort()[deletion.runs.length - 1] ?? '';
    if (!deletion.timedOut) {
      const left = await count(sql`created_at < ${lastLeadsCutoff}`);
      check(left === 0, `${left} leads older than the last run's leads cutoff ${lastLeadsCutoff} left`);
    }
  }
  current = 'end';
  await sleep(3000);
  running = false;
  await beside;
  await Promise.all([...inFlight]);
  clearInterval(sampler);
  await intake.close();
  const reportsAfter = await reports();
  check(reportsAfter === reportsBefore, `analytics summary and month × country report of ${range} unchanged`);
  if (reportsAfter !== reportsBefore)
    log(`before: ${reportsBefore.slice(0, 400)}\nafter:  ${reportsAfter.slice(0, 400)}`);

  const at = (l: number[], q: number) => l[Math.min(l.length - 1, Math.ceil(q * l.length) - 1)] ?? NaN;
  const lat = (name: string) => {
    const l = [...(byPhase[name] ?? [])].sort((a, b) => a - b);
    return `${l.length.toLocaleString('en')} | ${at(l, 0.5).toFixed(0)} / ${at(l, 0.95).toFixed(0)} / ${at(l, 0.99).toFixed(0)} ms | ${(l.at(-1) ?? NaN).toFixed(0)} ms`;
  };
  const p99 = (name: string) =>
    at(
      [...(byPhase[name] ?? [])].sort((a, b) => a - b),
      0.99,
    );
  const n = (x: number) => x.toLocaleString('en');
  console.log(
    `\n${ENGINE}, ${n(LEADS)} demo leads over ${DAYS} days, intake ${RATE}/s beside; intake answers ${JSON.stringify(statuses)}`,
  );
  console.log(
    '| Phase | Work (expected) | Runs | Wall time | Per second | Intake: leads | p50 / p95 / p99 | max | Server peak RSS |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  console.log(
    `| baseline (intake alone, ${BASELINE_S} s) | | | | | ${lat('baseline')} | ${(peakRss.baseline ?? 0).toFixed(0)} MB |`,
  );
  const row = (name: string, what: string, done: number, expected: number, r: typeof purge) =>
    console.log(
      `| ${name}${r.timedOut ? ' (stopped at --max-minutes)' : ''} | ${n(done)} ${what} (${n(expected)}) | ${r.runs.length} | ${r.seconds.toFixed(1)} s | ${n(Math.round(done / r.seconds))} | ${lat(name)} | ${(peakRss[name] ?? 0).toFixed(0)} MB |`,
    );
  row('purge', 'purged', purge.contacts, expectedPurge, purge);
  if (deletion) row('delete', 'deleted', deletion.leads, expectedDelete, deletion);
  const worst = Math.max(p99('purge'), deletion ? p99('delete') : 0);
  console.log(
    `\nTarget intake p99 ≤ 100 ms beside the purge: ${worst <= 100 ? 'met' : 'NOT met'} (worst phase p99 ${worst.toFixed(0)} ms).`,
  );
  if (failures.length) {
    console.log(`Checks FAILED: ${failures.join('; ')}`);
    process.exitCode = 1;
  } else console.log('Checks: all passed.');
  if (purge.timedOut || deletion?.timedOut) process.exitCode = 1;
} finally {
  child.kill('SIGTERM');
  partner.kill('SIGTERM');
  await db.destroy();
  rmSync(runDir, { recursive: true, force: true });
}
