// Live refresh (issue 13): what an open Overview or Leads tab costs the server. Chromium opens
// each screen on the real server and records the API requests one refresh sends (after the
// first load, over one LIVE_INTERVAL_MS); those requests are then replayed as many open tabs
// would send them, each tab once per interval, staggered, while leads are posted one after
// another, and compared with the same intake without any tab open; a last phase has the tabs
// alone, so the server's CPU time is theirs. See bench/README.md.
//
//   npx tsx bench/live-refresh.ts [--leads 200000] [--tabs 50] [--seconds 60] [--reuse]
//
// SQLite only (the default engine operators start with). Everything goes to 127.0.0.1.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { LIVE_INTERVAL_MS } from '../src/web/ui/liveInterval.js';
import { databaseUrl, loadFreshDemoData, WORK } from './data.js';
import { OWNER, startServer } from './server.js';

const { values: args } = parseArgs({
  options: {
    leads: { type: 'string', default: '200000' },
    tabs: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    reuse: { type: 'boolean', default: false },
  },
});
const LEADS = Number(args.leads);
const TABS = Math.min(500, Math.max(1, Number(args.tabs)));
const SECONDS = Math.min(300, Math.max(10, Number(args.seconds)));
const log = (...a: unknown[]) => console.error('[bench:live]', ...a);

const percentile = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};

/** Server CPU time (user + system) in ms, from /proc. */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // clock ticks of 10 ms (USER_HZ 100)
};

/** The API requests one refresh of `screen` sends, as Chromium sees them. */
async function refreshRequests(base: string, screen: string): Promise<string[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'leadgate-live-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${base}/login`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('operator-email').waitFor();
    await page.goto(`${base}${screen}`);
    await page.getByTestId('live-updated').filter({ hasText: 'Updated' }).waitFor({ timeout: 60_000 });
    await page.waitForLoadState('networkidle');
    const seen: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/api/')) seen.push(`${r.method()} ${u.pathname}${u.search}`);
    });
    await page.waitForTimeout(LIVE_INTERVAL_MS + 3000);
    return seen;
  } finally {
    await context.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function send(base: string, token: string, line: string) {
  const [method, url] = line.split(' ');
  const t0 = performance.now();
  const res = await fetch(`${base}${url}`, { method, headers: { authorization: `Bearer ${token}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${line}: ${res.status}`);
  return performance.now() - t0;
}

interface Phase {
  name: string;
  intake: number[];
  refreshes: number;
  requests: number;
  refreshMs: number[];
  cpuPercent: number;
}

async function phase(
  name: string,
  base: string,
  pid: number,
  token: string,
  intakeToken: string,
  campaignId: string,
  screens: string[][],
  withIntake: boolean,
): Promise<Phase> {
  const p: Phase = { name, intake: [], refreshes: 0, requests: 0, refreshMs: [], cpuPercent: 0 };
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const end = t0 + SECONDS * 1000;
  let k = 0;
  const intake = (async () => {
    while (withIntake && performance.now() < end) {
      const s = performance.now();
      const res = await fetch(`${base}/api/intake/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${intakeToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          first_name: 'Live',
          last_name: `Bench${++k}`,
          email: `live.${name.length}.${Date.now()}.${k}@example.com`,
          phone: `+49151${String(10_000_000 + ((Date.now() + k) % 89_999_999))}`,
          country: 'DE',
          ip: '203.0.113.7',
          campaign_id: campaignId,
        }),
      });
      const text = await res.text();
      if (res.status !== 201) throw new Error(`intake ${res.status}: ${text}`);
      p.intake.push(performance.now() - s);
    }
  })();
  // Each tab refreshes once per interval, the tabs spread evenly over it; a refresh is its screen's requests, in parallel as the browser sends them.
  const tabs = screens.length
    ? Array.from({ length: TABS }, async (_, i) => {
        const lines = screens[i % screens.length];
        await new Promise((r) => setTimeout(r, (i * LIVE_INTERVAL_MS) / TABS));
        while (performance.now() < end) {
          const s = performance.now();
          await Promise.all(lines.map((l) => send(base, token, l)));
          p.refreshMs.push(performance.now() - s);
          p.refreshes++;
          p.requests += lines.length;
          await new Promise((r) => setTimeout(r, Math.max(0, LIVE_INTERVAL_MS - (performance.now() - s))));
        }
      })
    : [];
  await Promise.all([
    intake,
    ...tabs.map((t) =>
      Promise.race([t, new Promise((r) => setTimeout(r, Math.max(0, end - performance.now()) + 5000))]),
    ),
  ]);
  p.cpuPercent = ((cpuMs(pid) - cpu0) / (performance.now() - t0)) * 100;
  return p;
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  const started = new Date();
  const url = databaseUrl('sqlite', '');
  const prepared = args.reuse
    ? 'reused from the previous run'
    : `loaded in ${(await loadFreshDemoData('sqlite', url, LEADS, '')).toFixed(0)} s`;
  const { base, child } = await startServer(url);
  try {
    const login = await fetch(`${base}/api/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(OWNER),
    });
    const { token } = (await login.json()) as { token: string };
    const post = async (u: string, body: unknown) => {
      const res = await fetch(`${base}${u}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status !== 201) throw new Error(`${u}: ${res.status} ${await res.text()}`);
      return (await res.json()) as Record<string, any>;
    };
    const provider = await post('/api/traffic-providers', { name: `Live bench ${Date.now()}` });
    const campaign = await post('/api/campaigns', {
      name: `Live bench ${Date.now()}`,
      traffic_provider_id: provider.id,
      flow_id: null,
      payout: { model: 'cpl', amount: 1 },
    });

    const screens: Record<string, string[]> = {};
    for (const screen of ['/', '/leads']) {
      log(`recording one refresh of ${screen} in Chromium (${LIVE_INTERVAL_MS / 1000} s)`);
      screens[screen] = await refreshRequests(base, screen);
      log(`${screen}: ${screens[screen].length} requests: ${screens[screen].join(', ')}`);
      if (!screens[screen].length) throw new Error(`${screen} sent nothing in one interval: live refresh is off?`);
    }
    const phases: Phase[] = [];
    const tabs = `${TABS} tabs open (Overview and Leads, half each)`;
    for (const [name, set, withIntake] of [
      ['intake alone', [], true],
      [`intake, ${tabs}`, Object.values(screens), true],
      [`${tabs}, no intake`, Object.values(screens), false],
    ] as const) {
      log(`phase: ${name}`);
      phases.push(
        await phase(name, base, child.pid!, token, provider.token, campaign.id, set as string[][], withIntake),
      );
    }
    const f = (x: number) => (Number.isNaN(x) ? '–' : x.toFixed(0));
    const report = [
      `Date: ${started.toISOString()}`,
      `Command: npx tsx bench/live-refresh.ts --leads ${LEADS} --tabs ${TABS} --seconds ${SECONDS}${args.reuse ? ' --reuse' : ''}`,
      `Machine: ${os.availableParallelism()} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM; Node ${process.version}`,
      `SQLite, ${LEADS.toLocaleString('en-US')} demo leads (${prepared}); refresh interval ${LIVE_INTERVAL_MS / 1000} s`,
      ...Object.entries(screens).map(
        ([s, l]) =>
          `One refresh of ${s === '/' ? 'Overview' : 'Leads'}: ${l.length} requests (${l.map((x) => x.split('?')[0].replace(/^GET /, '')).join(', ')})`,
      ),
      '',
      '| phase | requests/s from tabs | refresh p50 ms | refresh p95 ms | intakes | intake p50 ms | intake p99 ms | server CPU (% of one core) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...phases.map(
        (p) =>
          `| ${p.name} | ${(p.requests / SECONDS).toFixed(1)} | ${f(percentile(p.refreshMs, 50))} | ${f(percentile(p.refreshMs, 95))} | ${p.intake.length} | ${f(percentile(p.intake, 50))} | ${f(percentile(p.intake, 99))} | ${p.cpuPercent.toFixed(0)} % |`,
      ),
    ].join('\n');
    const out = path.join(WORK, `live-refresh-${started.toISOString().replace(/[:.]/g, '-')}.md`);
    writeFileSync(out, report + '\n');
    console.log(report);
    log(`written to ${out}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
