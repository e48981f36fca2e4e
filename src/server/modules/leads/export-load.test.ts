// Issue 12: a full export of many leads never stalls the server. Through real sockets: two clients
// take the CSV as fast as they can, a third reads it slowly; meanwhile leads arrive at intake and
// an operator searches. The event loop must never be blocked for long, and each of those answers
// comes within a bound that the export-on-the-main-thread code missed (see the bounds below).
// EXPORT_CONCURRENCY is read with the rest of the configuration (config.ts).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, call, expectProblem, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { loadConfig } from '../../config.js';
import { isPostgres } from '../../db/database.js';
import { exporters, type Exporter } from './exporter.js';

const LEADS = 100_000;

/** n leads of one provider in one statement (a recursive CTE / generate_series); `padding` lengthens each reason. */
async function bulkLeads(ta: TestApp, providerId: string, n: number, padding = '') {
  const cols =
    'id, created_at, first_name, last_name, email, phone, country, ip, traffic_provider_id, status, status_updated_at, cost_cents, revenue_cents, sub_id1, reason';
  if (isPostgres(ta.db)) {
    await sql`insert into leads (${sql.raw(cols)})
      select '00000000-0000-4000-8000-' || lpad(i::text, 12, '0') as id,
             to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at,
             'First' || i, 'Last, "' || i || '"', 'bulk' || i || '@example.test', '+4915' || lpad(i::text, 9, '0'),
             'DE', '203.0.113.7', ${providerId}, 'rejected', to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             150, 0, 'sub-' || (i % 97), 'partner said: bulk' || i || '@example.test is a duplicate' || ${padding}
      from generate_series(1, ${n}) as i`.execute(ta.db);
    await sql`analyze leads`.execute(ta.db);
  } else {
    await sql`insert into leads (${sql.raw(cols)})
      with recursive s(i) as (select 1 union all select i + 1 from s where i < ${n})
      select printf('00000000-0000-4000-8000-%012d', i),
             strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'),
             'First' || i, 'Last, "' || i || '"', 'bulk' || i || '@example.test', printf('+4915%09d', i),
             'DE', '203.0.113.7', ${providerId}, 'rejected', strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'),
             150, 0, 'sub-' || (i % 97), 'partner said: bulk' || i || '@example.test is a duplicate' || ${padding}
      from s`.execute(ta.db);
    await sql`analyze`.execute(ta.db);
  }
}

interface Download {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: number;
  done: Promise<void>;
  res: http.IncomingMessage;
  req: http.ClientRequest;
}

/** GET through a real socket; resolves once the answer's headers are in. The body is not read. */
function get(base: string, path: string, token: string): Promise<Download> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${base}${path}`, { headers: { authorization: `Bearer ${token}` }, agent: false }, (res) => {
      res.pause();
      const d: Download = {
        status: res.statusCode!,
        headers: res.headers,
        bytes: 0,
        res,
        req,
        done: new Promise(
          (ok, fail) => (
            res.once('end', ok),
            res.once('error', fail),
            res.once('aborted', () => fail(new Error('aborted')))
          ),
        ),
      };
      d.done.catch(() => {}); // a test that hangs up on purpose does not wait for the end
      resolve(d);
    });
    req.on('error', reject);
  });
}

/** Reads everything as fast as it comes. */
function readFast(d: Download) {
  d.res.on('data', (b: Buffer) => (d.bytes += b.length));
  d.res.resume();
  return d.done;
}

/** Takes `bytes` every `everyMs` ms: a client on a slow line. */
function readSlowly(d: Download, bytes: number, everyMs: number) {
  const timer = setInterval(() => {
    let taken = 0;
    for (let b: Buffer | null; taken < bytes && (b = d.res.read(Math.min(bytes - taken, 16384)) as Buffer | null);)
      taken += b.length;
    d.bytes += taken;
  }, everyMs);
  d.done.finally(() => clearInterval(timer)).catch(() => {});
  return () => clearInterval(timer);
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

/**
 * Bounds, from runs on this loaded 2-core machine (other test suites running beside it). Before
 * issue 12 (export on the event loop) this test saw: event loop delay p99 1,937 ms (SQLite) and
 * 494 ms (PostgreSQL), max 1,937 / 578 ms; slowest intake 1,574 / 3,743 ms. With the export
 * workers: p99 64–122 ms, max 150–481 ms (the max follows whatever else the machine runs), slowest
 * intake 229–759 ms.
 */
const MAX_LOOP_P99_MS = 250;
const MAX_LOOP_DELAY_MS = 1000;
const MAX_INTAKE_MS = 1200;
const MAX_SEARCH_MS = 1000;

const exporterOf = (ta: TestApp): Exporter => exporters.get(ta.db)!;

async function until(what: string, ok: () => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

forEachDatabase('Leads export under load', (engine) => {
  test(
    `while ${LEADS.toLocaleString('en-US')} leads are exported twice, intake and search answer and the event loop is never blocked long`,
    { timeout: 180_000 },
    async (t) => {
      const ta = await buildTestApp(t, engine, { env: { LOG_LEVEL: 'warn', EXPORT_CONCURRENCY: '3' } });
      const w = await makeWorld(t, ta, [{}]);
      let t0 = performance.now();
      await bulkLeads(ta, w.providerId, LEADS);
      t.diagnostic(`${LEADS} leads inserted in ${(performance.now() - t0).toFixed(0)} ms`);
      await ta.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(ta.app.server.address() as AddressInfo).port}`;
      // Warm up the paths measured below, so their first-call costs are not counted.
      const warm = await postLead(ta, w.token, sampleLead({ campaign_id: w.campaignId }));
      assert.equal(warm.statusCode, 201, warm.body);
      assert.equal(
        (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?limit=50&status=delivered' }))
          .statusCode,
        200,
      );

      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      t0 = performance.now();
      // One client on a slow line, two taking the file as fast as they can.
      const slow = await get(base, '/api/leads/export', ta.ownerToken);
      const fast = [
        await get(base, '/api/leads/export', ta.ownerToken),
        await get(base, '/api/leads/export?status=rejected,delivered', ta.ownerToken),
      ];
      for (const d of [slow, ...fast]) assert.equal(d.status, 200);
      const stopSlow = readSlowly(slow, 32 * 1024, 50);
      const fastDone = Promise.all(fast.map(readFast));
      let finished = false;
      fastDone.finally(() => (finished = true)).catch(() => {});

      const intake: number[] = [];
      const search: number[] = [];
      while (!finished || intake.length < 10) {
        let s = performance.now();
        const lead = await postLead(ta, w.token, sampleLead({ campaign_id: w.campaignId }));
        intake.push(performance.now() - s);
        assert.equal(lead.statusCode, 201, lead.body);
        assert.equal(lead.json().status, 'delivered');
        s = performance.now();
        const found = await call(ta.app, ta.ownerToken, {
          method: 'GET',
          url: '/api/leads/search?limit=50&status=delivered',
        });
        search.push(performance.now() - s);
        assert.equal(found.statusCode, 200);
        await new Promise((r) => setTimeout(r, 20));
      }
      await fastDone;
      const exportMs = performance.now() - t0;
      loop.disable();
      const maxLoopMs = loop.max / 1e6;
      const exporter = exporters.get(ta.db);
      const slowJob = exporter ? [...exporter.jobs.values()][0] : undefined;
      t.diagnostic(
        `2 fast exports of ${(fast[0].bytes / 1e6).toFixed(1)} MB in ${exportMs.toFixed(0)} ms; slow reader took ${(slow.bytes / 1e6).toFixed(2)} MB` +
          (slowJob ? ` while its worker had sent ${(slowJob.bytes / 1e6).toFixed(2)} MB` : '') +
          `; event loop delay max ${maxLoopMs.toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms; ` +
          `intake ${intake.length}× p50 ${percentile(intake, 50).toFixed(0)} max ${Math.max(...intake).toFixed(0)} ms; ` +
          `search ${search.length}× p50 ${percentile(search, 50).toFixed(0)} max ${Math.max(...search).toFixed(0)} ms`,
      );
      for (const d of fast) assert.ok(d.bytes > LEADS * 200, `the whole file came (${d.bytes} bytes)`);
      const p99LoopMs = loop.percentile(99) / 1e6;
      assert.ok(
        p99LoopMs < MAX_LOOP_P99_MS,
        `event loop delay p99 ${p99LoopMs.toFixed(0)} ms (bound ${MAX_LOOP_P99_MS})`,
      );
      assert.ok(
        maxLoopMs < MAX_LOOP_DELAY_MS,
        `the event loop was blocked for ${maxLoopMs.toFixed(0)} ms (bound ${MAX_LOOP_DELAY_MS})`,
      );
      assert.ok(
        Math.max(...intake) < MAX_INTAKE_MS,
        `an intake took ${Math.max(...intake).toFixed(0)} ms (bound ${MAX_INTAKE_MS})`,
      );
      assert.ok(
        Math.max(...search) < MAX_SEARCH_MS,
        `a search took ${Math.max(...search).toFixed(0)} ms (bound ${MAX_SEARCH_MS})`,
      );

      // Back-pressure: the slow client's worker has sent only what the client took plus what the
      // socket buffers and one page ahead hold (a few MB), not the rest of the 30 MB file; and once
      // the client stops reading, the worker stops.
      assert.ok(slowJob, 'the slow export is still running');
      assert.ok(slowJob.bytes - slow.bytes < 12e6, `${slowJob.bytes - slow.bytes} bytes sent and not yet read`);
      stopSlow();
      await new Promise((r) => setTimeout(r, 500));
      const sent = slowJob.bytes;
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(
        slowJob.bytes - sent < 1e6,
        `a client that reads nothing holds its worker (${slowJob.bytes - sent} bytes more)`,
      );
      assert.ok(slowJob.rows < LEADS, 'and the file is not all sent');
      slow.req.destroy();
      await until('the slow export stopped', () => exporter!.busy === 0);
    },
  );

  test(
    'beyond EXPORT_CONCURRENCY exports at once: 429 rate_limited with Retry-After; a slot frees when an export ends',
    { timeout: 60_000 },
    async (t) => {
      const ta = await buildTestApp(t, engine, { env: { EXPORT_CONCURRENCY: '1' } });
      const w = await makeWorld(t, ta, [{}]);
      await bulkLeads(ta, w.providerId, 20_000, ' '.repeat(1000)); // 26 MB of CSV: more than socket buffers hold
      await ta.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(ta.app.server.address() as AddressInfo).port}`;
      const exporter = exporterOf(ta);
      assert.equal(exporter.limit, 1);

      const held = await get(base, '/api/leads/export', ta.ownerToken); // not read: back-pressure holds it
      assert.equal(held.status, 200);
      assert.equal(exporter.busy, 1);
      const refused = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/export?status=new' });
      const problem = expectProblem(refused, 429, 'rate_limited');
      assert.equal(refused.headers['retry-after'], '10');
      assert.match(problem.detail, /1 lead export is already running/);
      const audited = await ta.db.selectFrom('audit_log').select('id').where('action', '=', 'lead.exported').execute();
      assert.equal(audited.length, 1, 'a refused export is not recorded as an export');

      // The schema says so.
      const doc = (await call(ta.app, null, { method: 'GET', url: '/api/openapi.json' })).json();
      const op = doc.paths['/api/leads/export'].get;
      assert.match(op.responses['429'].description, /EXPORT_CONCURRENCY/);
      assert.ok(op.responses['429'].headers['Retry-After']);

      // The held export ends (its client reads it all): the next one is served.
      await readFast(held);
      assert.ok(held.bytes > 20_000 * 1000);
      await until('the export slot is free', () => exporter.busy === 0);
      const next = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/export?status=new' });
      assert.equal(next.statusCode, 200);
      assert.equal(exporter.threadCount, 1, 'the finished worker was reused');
    },
  );

  test('a client that disconnects stops its export worker at once', { timeout: 60_000 }, async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    await bulkLeads(ta, w.providerId, 20_000, ' '.repeat(1000)); // 26 MB of CSV: more than socket buffers hold
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(ta.app.server.address() as AddressInfo).port}`;
    const exporter = exporterOf(ta);

    const d = await get(base, '/api/leads/export', ta.ownerToken);
    assert.equal(d.status, 200);
    await new Promise((r) => setTimeout(r, 200));
    const job = [...exporter.jobs.values()][0];
    assert.ok(job && job.rows < 20_000, `the worker waits for the reader (${job?.rows} rows sent)`);
    assert.equal(exporter.threadCount, 1);
    d.req.destroy(); // the client hangs up mid-file
    await until('the worker thread ended', () => exporter.threadCount === 0 && exporter.busy === 0);
    assert.equal(exporter.stats.cancelled, 1);
    assert.equal(exporter.stats.finished, 0);
    const sent = exporter.stats.bytesPosted;
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(exporter.stats.bytesPosted, sent, 'nothing more was produced');

    // A new export gets a new worker and the whole file.
    const again = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/export' });
    assert.equal(again.statusCode, 200);
    assert.equal(again.body.split('\r\n').length - 2, 20_000);
  });

  test(
    'exports share one worker thread: one client hanging up stops only its own export',
    { timeout: 60_000 },
    async (t) => {
      const ta = await buildTestApp(t, engine, { env: { EXPORT_CONCURRENCY: '3' } });
      const w = await makeWorld(t, ta, [{}]);
      await bulkLeads(ta, w.providerId, 20_000, ' '.repeat(1000)); // 26 MB of CSV: more than socket buffers hold
      await ta.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(ta.app.server.address() as AddressInfo).port}`;
      const exporter = exporterOf(ta);

      const leaving = await get(base, '/api/leads/export', ta.ownerToken);
      const staying = await get(base, '/api/leads/export', ta.ownerToken);
      assert.equal(exporter.busy, 2);
      assert.equal(exporter.threadCount, 1, 'two exports, one thread');
      const [leavingJob] = [...exporter.jobs.values()];
      leaving.req.destroy();
      await until('the abandoned export stopped', () => exporter.busy === 1);
      const sent = leavingJob.bytes;
      await readFast(staying);
      assert.ok(staying.bytes > 20_000 * 1000, `the other export came whole (${staying.bytes} bytes)`);
      assert.equal(exporter.stats.cancelled, 1);
      assert.equal(exporter.stats.finished, 1);
      assert.equal(leavingJob.bytes, sent, 'the abandoned job produced nothing more');
      assert.equal(exporter.threadCount, 1, 'the thread stays for the next export');
    },
  );
});

test('EXPORT_CONCURRENCY: 2 by default, a whole number from 1 to 64', () => {
  assert.equal(loadConfig({}).exportConcurrency, 2);
  assert.equal(loadConfig({ EXPORT_CONCURRENCY: '5' }).exportConcurrency, 5);
  for (const bad of ['0', '65', '1.5', 'two', '-1'])
    assert.throws(
      () => loadConfig({ EXPORT_CONCURRENCY: bad }),
      /EXPORT_CONCURRENCY must be a whole number from 1 to 64/,
      bad,
    );
});
