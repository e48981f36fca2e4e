// CSV import (issue 28): a file of --rows rows, 1 % of them bad in six kinds (country, phone,
// email, a required field empty, a duplicate of an earlier row, a duplicate of a lead already
// stored), uploaded (streamed), dry-run and imported ("store") into the real server in its own
// process, while intake takes --rate leads/s beside it for another provider (open loop, every
// lead routed to a partner on loopback). It checks that the dry run names exactly the planted
// rows and the import stores exactly the others, and reports the server's peak RSS (sampled
// every 100 ms from /proc) and intake's latency during the import's work.
//
//   npx tsx bench/imports.ts [--engine sqlite|postgres] [--rows 1000000] [--rate 100]
//                            [--postgres-url postgres://postgres@127.0.0.1:55432/postgres]
import { fork } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { apiCaller, benchRoute, freePort, freshPostgresDatabase, startServer } from './server.js';

const { values: args } = parseArgs({
  options: {
    engine: { type: 'string', default: 'sqlite' },
    rows: { type: 'string', default: '1000000' },
    rate: { type: 'string', default: '100' },
    'postgres-url': {
      type: 'string',
      default:
        process.env.BENCH_POSTGRES_URL ||
        process.env.TEST_POSTGRES_URL ||
        'postgres://postgres@127.0.0.1:55432/postgres',
    },
  },
});
const ROWS = Math.min(5_000_000, Math.max(1000, Number(args.rows)));
const RATE = Math.min(1000, Math.max(1, Number(args.rate)));
const log = (...a: unknown[]) => console.error('[bench:imports]', ...a);
const KINDS = ['country', 'phone', 'email', 'missing', 'dup-in-file', 'dup-stored'] as const;
const SEEDED = 200; // leads stored before the import, through intake, that the file repeats

const rssMb = (pid: number) => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

/** POSTs the file as text/csv from a worker thread (its own event loop); the answer's status and text. */
function uploadInWorker(url: string, token: string, file: string): Promise<{ status: number; text: string }> {
  const code = `
    const { workerData, parentPort } = require('node:worker_threads');
    const { createReadStream } = require('node:fs');
    const { Readable } = require('node:stream');
    fetch(workerData.url, {
      method: 'POST',
      headers: { 'content-type': 'text/csv', authorization: 'Bearer ' + workerData.token },
      body: Readable.toWeb(createReadStream(workerData.file)),
      duplex: 'half',
    }).then(async (res) => parentPort.postMessage({ status: res.status, text: await res.text() }),
            (err) => parentPort.postMessage({ status: 0, text: String(err) }));`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData: { url, token, file } });
    worker.once('message', (m: { status: number; text: string }) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

const phone = (n: number) => `+49 151 ${String(20_000_000 + n).slice(-8)}`;
const good = (n: number) => `Ann${n},Lee,ann${n}@example.com,${phone(n)},DE,198.51.100.${n % 250},s${n % 100}`;

/** The file: every 100th row is bad, the kinds in turn; returns how many of each were planted. */
async function writeCsv(file: string) {
  const out = createWriteStream(file);
  const planted: Record<string, number> = Object.fromEntries(KINDS.map((k) => [k, 0]));
  const write = (s: string) => (out.write(s) ? undefined : new Promise<void>((r) => out.once('drain', () => r())));
  await write('First Name,Last Name,E-Mail,Phone,Country,IP,sub1\n');
  let chunk = '';
  for (let i = 1; i <= ROWS; i++) {
    let line: string;
    if (i % 100 !== 0) line = good(i);
    else {
      const kind = KINDS[(i / 100) % KINDS.length];
      planted[kind]++;
      if (kind === 'country') line = `Ann${i},Lee,ann${i}@example.com,${phone(i)},XX,198.51.100.1,s`;
      else if (kind === 'phone') line = `Ann${i},Lee,ann${i}@example.com,+49 12,DE,198.51.100.1,s`;
      else if (kind === 'email') line = `Ann${i},Lee,ann${i}.example.com,${phone(i)},DE,198.51.100.1,s`;
      else if (kind === 'missing') line = `,Lee,ann${i}@example.com,${phone(i)},DE,198.51.100.1,s`;
      else if (kind === 'dup-in-file') line = good(i - 1);
      else
        line = `Seed,Lead,seed${i % SEEDED}@example.com,+49 152 ${String(10_000_000 + (i % SEEDED)).slice(-8)},DE,198.51.100.2,s`;
    }
    chunk += line + '\n';
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  await new Promise<void>((r) => out.end(() => r()));
  return planted;
}

const partnerPort = await freePort();
const partner = fork(fileURLToPath(new URL('./partner.ts', import.meta.url)), [String(partnerPort), '0'], {
  execArgv: ['--import', 'tsx'],
  stdio: 'inherit',
});
await new Promise((resolve) => partner.once('message', resolve));
const dir = mkdtempSync(path.join(os.tmpdir(), 'leadgate-bench-imports-'));
const url =
  args.engine === 'sqlite'
    ? `sqlite:${path.join(dir, 'leadgate.db')}`
    : await freshPostgresDatabase(args['postgres-url']!, 'leadgate_bench_imports');
const { base, child } = await startServer(url, {
  DATA_DIR: dir,
  PARTNER_ALLOWED_NETWORKS: '127.0.0.0/8,::1/128',
  IMPORT_MAX_BYTES: String(1024 * 1024 * 1024),
  METRICS_TOKEN: 'bench-metrics-token-0123456789',
});

try {
  const call = apiCaller(base);
  const { token, campaign } = await benchRoute(call, partnerPort);
  const target = await campaign('Imported list');
  const live = await campaign('Live traffic');
  const intake = new Pool(base, { connections: 32 });
  const postLead = (t: string, n: number, email: string, tel: string) =>
    intake
      .request({
        method: 'POST',
        path: '/api/intake/leads',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t}` },
        body: JSON.stringify({
          first_name: 'Live',
          last_name: `L${n}`,
          email,
          phone: tel,
          country: 'DE',
          ip: '198.51.100.9',
        }),
      })
      .then(async (res) => {
        await res.body.dump();
        return res.statusCode;
      });
  for (let i = 0; i < SEEDED; i++) {
    const status = await postLead(
      target.provider.token,
      i,
      `seed${i}@example.com`,
      `+49 152 ${String(10_000_000 + i).slice(-8)}`,
    );
    if (status !== 201) throw new Error(`seeding lead ${i}: ${status}`);
  }

  const file = path.join(dir, 'leads.csv');
  log(`writing ${ROWS.toLocaleString('en')} rows…`);
  const planted = await writeCsv(file);
  const bytes = statSync(file).size;
  const plantedTotal = Object.values(planted).reduce((a, b) => a + b, 0);
  log(`${(bytes / 1e6).toFixed(0)} MB, ${plantedTotal} bad rows planted: ${JSON.stringify(planted)}`);

  // Intake beside, for the whole upload, dry run and import; RSS sampled meanwhile.
  const latencies: number[] = [];
  let current = 'upload';
  const byPhase: Record<string, number[]> = { upload: [], 'dry run': [], import: [] };
  const statuses: Record<string, number> = {};
  let peakRss = 0;
  const baselineRss = rssMb(child.pid!);
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb(child.pid!))), 100);
  let running = true;
  const inFlight: Promise<void>[] = [];
  const beside = (async () => {
    const start = performance.now();
    for (let i = 0; running; i++) {
      const wait = start + (i * 1000) / RATE - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const sent = performance.now();
      const phaseAtSend = current;
      inFlight.push(
        postLead(live.provider.token, i, `live${i}@example.com`, `+49 160 ${String(10_000_000 + i).slice(-8)}`)
          .then((s) => {
            const ms = performance.now() - sent;
            latencies.push(ms);
            byPhase[phaseAtSend]?.push(ms);
            statuses[s] = (statuses[s] ?? 0) + 1;
          })
          .catch(() => {
            statuses.error = (statuses.error ?? 0) + 1;
          }),
      );
    }
  })();

  const phase = async (name: string, fn: () => Promise<unknown>) => {
    current = name;
    const t0 = performance.now();
    await fn();
    const s = (performance.now() - t0) / 1000;
    log(`${name}: ${s.toFixed(1)} s`);
    return s;
  };
  const waitFor = async (id: string, states: string[]) => {
    let last = '';
    for (;;) {
      const imp = await call('GET', `/api/imports/${id}`, undefined, token);
      const line = `${imp.state} ${imp.progress.percent.toFixed(0)} %`;
      if (line !== last) log(line);
      last = line;
      if (states.includes(imp.state)) return imp;
      if (imp.state === 'failed') throw new Error(`import failed: ${imp.error}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };

  let id = '';
  const uploadS = await phase('upload', async () => {
    // Sent from a worker thread: streaming the file from this thread would delay the intake
    // requests timed here, and the client's lateness would be counted as the server's.
    const { status, text } = await uploadInWorker(`${base}/api/imports?name=bench.csv`, token, file);
    if (status !== 201) throw new Error(`upload: ${status} ${text}`);
    id = JSON.parse(text).id;
  });
  const body = {
    mapping: {
      first_name: 'First Name',
      last_name: 'Last Name',
      email: 'E-Mail',
      phone: 'Phone',
      country: 'Country',
      ip: 'IP',
      sub_id1: 'sub1',
    },
    traffic_provider_id: target.provider.id,
    campaign_id: target.campaign.id,
  };
  let dry: { counts: Record<string, number>; dry_run: Record<string, number> } | null = null;
  const dryS = await phase('dry run', async () => {
    await call('POST', `/api/imports/${id}/dry-run`, body, token);
    dry = await waitFor(id, ['validated']);
  });
  let done: { counts: Record<string, number> } | null = null;
  const importS = await phase('import', async () => {
    await call('POST', `/api/imports/${id}/run`, { ...body, mode: 'store' }, token);
    done = await waitFor(id, ['done']);
  });
  running = false;
  await beside;
  await Promise.all(inFlight);
  clearInterval(sampler);
  await intake.close();

  const metrics = await (
    await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer bench-metrics-token-0123456789' } })
  ).text();
  log(
    `server event loop: ${metrics
      .split('\n')
      .filter((l) => /^nodejs_eventloop_lag_(max|p99|mean)_seconds/.test(l))
      .join('; ')}`,
  );
  const named = await call('GET', `/api/imports/${id}/errors?limit=1`, undefined, token);
  const stored = await call('GET', `/api/leads/count?traffic_provider_id=${target.provider.id}`, undefined, token);
  const expectedImported = ROWS - plantedTotal;
  latencies.sort((a, b) => a - b);
  const at = (q: number, l = latencies) => l[Math.min(l.length - 1, Math.ceil(q * l.length) - 1)] ?? NaN;
  for (const [name, l] of Object.entries(byPhase)) {
    l.sort((a, b) => a - b);
    log(
      `intake during ${name}: ${l.length} leads, p50 ${at(0.5, l).toFixed(0)} ms, p99 ${at(0.99, l).toFixed(0)} ms, max ${(l.at(-1) ?? NaN).toFixed(0)} ms`,
    );
  }
  log(
    `dry run: ${JSON.stringify(dry!.counts)}; import: ${JSON.stringify(done!.counts)}; first error: ${JSON.stringify(named.data?.[0])}`,
  );
  console.log(
    '| Engine | Rows | MB | Bad planted | Bad named (dry run) | Imported (expected) | Upload | Dry run | Import | Server RSS: before → peak | Intake beside: leads, p50, p99 |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const badNamed = dry!.counts.bad + dry!.counts.duplicates;
  console.log(
    `| ${args.engine} | ${ROWS.toLocaleString('en')} | ${(bytes / 1e6).toFixed(0)} | ${plantedTotal} | ${badNamed} | ` +
      `${done!.counts.imported} (${expectedImported}; leads stored ${stored.count - SEEDED}) | ${uploadS.toFixed(0)} s | ${dryS.toFixed(0)} s | ${importS.toFixed(0)} s | ` +
      `${baselineRss.toFixed(0)} → ${peakRss.toFixed(0)} MB | ${JSON.stringify(statuses)}, ${at(0.5).toFixed(0)} ms, ${at(0.99).toFixed(0)} ms |`,
  );
  if (badNamed !== plantedTotal || done!.counts.imported !== expectedImported) process.exitCode = 1;
} finally {
  child.kill('SIGTERM');
  partner.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
