// GET /metrics (API-CONTRACT section 4): who may scrape it, and that what it shows is what
// happened (an intake, a partner call, a postback), labelled by route pattern, never by URL.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { test } from 'node:test';
import { buildApp } from '../../app.js';
import { openDatabase } from '../../db/database.js';
import { ConfigError, loadConfig } from '../../config.js';
import { insertPendingLead, makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { buildTestApp, call, ENGINES, expectProblem, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { rejecting } from '../../../../test/partner-server.js';
import { sqlOperation } from './metrics.js';

const TOKEN = 'metrics-token-0123456789abcdef';
const withMetrics = { env: { METRICS_TOKEN: TOKEN } };

const scrape = (ta: TestApp, authorization?: string, remoteAddress?: string) =>
  ta.app.inject({
    method: 'GET',
    url: '/metrics',
    headers: authorization === undefined ? {} : { authorization },
    ...(remoteAddress ? { remoteAddress } : {}),
  });

/** The samples of the text format: `name{labels} value` → value, keyed by `name{labels}` as printed. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

/** The one sample whose name is `name` and whose labels include every `labels` pair; its value (undefined: none). */
function sample(all: Map<string, number>, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = [...all].filter(([k]) => {
    const [n, rest = ''] = k.split('{');
    return n === name && Object.entries(labels).every(([l, v]) => rest.includes(`${l}="${v}"`));
  });
  assert.ok(found.length <= 1, `more than one ${name} ${JSON.stringify(labels)}: ${found.map(([k]) => k).join(', ')}`);
  return found[0]?.[1];
}

/** Every label value in the output. */
const labelValues = (text: string) => [...text.matchAll(/[a-zA-Z_]+="((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);

test('METRICS_TOKEN: unset is null; shorter than 16 characters or with spaces refuses to start, naming it', () => {
  assert.equal(loadConfig({}).metricsToken, null);
  assert.equal(loadConfig({ METRICS_TOKEN: TOKEN }).metricsToken, TOKEN);
  for (const bad of ['short-token', 'sixteen chars ok but spaced']) {
    assert.throws(
      () => loadConfig({ METRICS_TOKEN: bad }),
      (err: unknown) => err instanceof ConfigError && /METRICS_TOKEN must be at least 16/.test(err.message),
    );
  }
});

test('SQL statements are labelled by their first keyword only, never their text', () => {
  assert.equal(sqlOperation('select "id" from "leads" where "email" = ?'), 'select');
  assert.equal(sqlOperation('  INSERT into x values (1)'), 'insert');
  assert.equal(sqlOperation("vacuum into '/tmp/secret'"), 'other');
});

forEachDatabase('metrics', (engine) => {
  test('without METRICS_TOKEN, /metrics answers 404 problem+json, with or without a token, and no dashboard page', async (t) => {
    const ta = await buildTestApp(t, engine);
    expectProblem(await scrape(ta), 404, 'not_found');
    expectProblem(await scrape(ta, `Bearer ${TOKEN}`), 404, 'not_found');
    expectProblem(await scrape(ta, `Bearer ${ta.ownerToken}`), 404, 'not_found');
  });

  test('with METRICS_TOKEN: 401 with WWW-Authenticate without it, with a wrong one, or with an operator session', async (t) => {
    const ta = await buildTestApp(t, engine, withMetrics);
    for (const authorization of [
      undefined,
      'Bearer',
      `Bearer ${TOKEN}x`,
      `Bearer ${TOKEN.slice(0, -1)}`,
      `Basic ${TOKEN}`,
      `Bearer ${ta.ownerToken}`,
    ]) {
      const res = await scrape(ta, authorization);
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/, `WWW-Authenticate for ${authorization}`);
      assert.doesNotMatch(res.body, /leadgate_|nodejs_/, 'no metric leaks into a refusal');
    }
  });

  test('with the token: 200 in the Prometheus text format, from any address even under an IP allow-list, never rate limited', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { ...withMetrics.env, RATE_LIMIT_PER_IP: '3' } });
    const put = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/settings/security',
      payload: { ip_allowlist: ['127.0.0.0/8'] },
    });
    assert.equal(put.statusCode, 200, put.body);
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles', remoteAddress: '192.0.2.9' }),
      403,
      'ip_not_allowed',
    );

    for (let i = 0; i < 5; i++)
      assert.equal(
        (await scrape(ta, `Bearer ${TOKEN}`, '192.0.2.9')).statusCode,
        200,
        'under the address limit of 3 a minute',
      );
    const res = await scrape(ta, `Bearer ${TOKEN}`, '192.0.2.9');
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers.ratelimit, undefined, 'not counted');
    assert.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
    const all = samples(res.body);
    // Process and event loop (collectDefaultMetrics), and the build.
    assert.ok((sample(all, 'process_resident_memory_bytes') ?? 0) > 0, 'resident memory');
    assert.ok(sample(all, 'nodejs_eventloop_lag_seconds') !== undefined, 'event-loop lag');
    assert.equal(sample(all, 'leadgate_build_info', { version: (await import('../../version.js')).VERSION }), 1);
    assert.equal(sample(all, 'leadgate_database_up'), 1);
    assert.equal(sample(all, 'leadgate_pending_deliveries'), 0);
  });

  test('an intake, a partner call and a postback show up by route pattern, partner and outcome; no URL, no token', async (t) => {
    const ta = await buildTestApp(t, engine, withMetrics);
    const w = await makeWorld(t, ta, [
      { handler: rejecting(), fields: { daily_cap: 5 } },
      { fields: { daily_cap: 7 } },
    ]);
    const [refuser, taker] = w.partners;

    const lead = await postLead(ta, w.token, sampleLead());
    assert.equal(lead.statusCode, 201, lead.body);
    assert.equal(lead.json().status, 'delivered');
    // The same Idempotency-Key twice: one lead, one count.
    const key = { 'idempotency-key': 'metrics-test-1' };
    const dupe = sampleLead();
    assert.equal((await postLead(ta, w.token, dupe, key)).statusCode, 201);
    assert.equal((await postLead(ta, w.token, dupe, key)).statusCode, 201);
    assert.equal((await postLead(ta, w.token, { ...sampleLead(), email: 'not an email' })).statusCode, 400);
    // A postback: its token is in the path.
    const postback = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${refuser.postbackToken}?lead_id=nope&status=ftd`,
    });
    assert.ok(postback.statusCode < 500, postback.body);
    await insertPendingLead(ta, w);
    await assert.rejects(sql`select * from no_such_table`.execute(ta.db)); // on the app's own database handle

    const res = await scrape(ta, `Bearer ${TOKEN}`);
    assert.equal(res.statusCode, 200);
    const all = samples(res.body);

    // Requests by route pattern and status.
    const intake = { method: 'POST', route: '/api/intake/leads' };
    assert.equal(sample(all, 'leadgate_http_request_duration_seconds_count', { ...intake, status_code: '201' }), 3);
    assert.equal(sample(all, 'leadgate_http_request_duration_seconds_count', { ...intake, status_code: '400' }), 1);
    assert.equal(
      sample(all, 'leadgate_http_request_duration_seconds_count', {
        route: '/api/postback/:token',
        status_code: String(postback.statusCode),
      }),
      1,
    );
    assert.ok((sample(all, 'leadgate_http_request_duration_seconds_sum', { ...intake, status_code: '201' }) ?? 0) > 0);

    // Leads by the status intake answered: two leads (the replay is not a third).
    assert.equal(sample(all, 'leadgate_leads_received_total', { status: 'delivered' }), 2);

    // Partner calls: the first partner refused both leads, the second took them.
    const calls = 'leadgate_partner_call_duration_seconds_count';
    assert.equal(sample(all, calls, { partner_id: refuser.id, partner: refuser.name, outcome: 'rejected' }), 2);
    assert.equal(sample(all, calls, { partner_id: taker.id, partner: taker.name, outcome: 'accepted' }), 2);
    assert.equal(sample(all, calls, { partner_id: taker.id, outcome: 'rejected' }), undefined);
    assert.equal(
      sample(all, 'leadgate_partner_call_duration_seconds_bucket', {
        partner_id: taker.id,
        outcome: 'accepted',
        le: '+Inf',
      }),
      2,
    );

    // From the database at scrape time: the pending lead, today's cap slots.
    assert.equal(sample(all, 'leadgate_pending_deliveries'), 1);
    assert.equal(sample(all, 'leadgate_partner_daily_cap', { partner_id: taker.id }), 7);
    assert.equal(sample(all, 'leadgate_partner_daily_cap_used', { partner_id: taker.id }), 2);
    assert.equal(
      sample(all, 'leadgate_partner_daily_cap_used', { partner_id: refuser.id }),
      0,
      'a refusal gives its slot back',
    );

    // Database statements, timed.
    assert.ok(
      (sample(all, 'leadgate_db_query_duration_seconds_count', { operation: 'select', outcome: 'ok' }) ?? 0) > 0,
    );
    assert.ok(
      (sample(all, 'leadgate_db_query_duration_seconds_count', { operation: 'insert', outcome: 'ok' }) ?? 0) > 0,
    );
    assert.equal(
      sample(all, 'leadgate_db_query_duration_seconds_count', { operation: 'select', outcome: 'error' }),
      1,
      'the failed statement, timed as an error',
    );

    // No URL, token or id-bearing path in any label: every route label is a registered pattern.
    const patterns = new Set([...ta.app.routeTable.map((r) => r.url), 'unmatched']);
    const routes = [...res.body.matchAll(/route="([^"]*)"/g)].map((m) => m[1]);
    assert.ok(routes.length > 0);
    assert.deepEqual(
      routes.filter((r) => !patterns.has(r)),
      [],
    );
    for (const secret of [TOKEN, w.token, ta.ownerToken, refuser.postbackToken]) {
      assert.ok(!res.body.includes(secret), 'a token appears in the metrics');
    }
    assert.ok(
      labelValues(res.body).every((v) => !v.includes('?')),
      'no query string in a label',
    );
  });

  test('the database gone: the scrape still answers 200, says leadgate_database_up 0 and leaves the database gauges out', async (t) => {
    const ta = await buildTestApp(t, engine, withMetrics);
    const db = openDatabase(ta.config.database);
    const app = await buildApp(ta.config, db, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
    t.after(() => app.close());
    const first = samples(
      (await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).body,
    );
    assert.equal(sample(first, 'leadgate_database_up'), 1);
    assert.equal(sample(first, 'leadgate_pending_deliveries'), 0);
    await db.destroy();
    const res = await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.statusCode, 200, res.body);
    const all = samples(res.body);
    assert.equal(sample(all, 'leadgate_database_up'), 0);
    assert.equal(sample(all, 'leadgate_pending_deliveries'), undefined);
  });

  test('the output passes promtool check metrics', async (t) => {
    const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
    if (probe.error) {
      if (process.env.CI === 'true')
        assert.fail(
          `promtool is not installed (Debian package prometheus; .ci/run installs it): ${probe.error.message}`,
        );
      t.skip('promtool is not installed (apt-get install prometheus); CI runs this check');
      return;
    }
    const ta = await buildTestApp(t, engine, withMetrics);
    const w = await makeWorld(t, ta, [{ fields: { daily_cap: 3 } }]);
    assert.equal((await postLead(ta, w.token, sampleLead())).statusCode, 201);
    const res = await scrape(ta, `Bearer ${TOKEN}`);
    assert.equal(res.statusCode, 200);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: res.body, encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check metrics:\n${check.stdout}${check.stderr}`);
  });
});

test('each app has its own registry: two apps in one process count their own requests', async (t) => {
  const a = await buildTestApp(t, ENGINES[0], withMetrics);
  const b = await buildTestApp(t, ENGINES[0], withMetrics);
  for (let i = 0; i < 3; i++) await a.app.inject({ method: 'GET', url: '/api/health' });
  const count = async (ta: TestApp) =>
    sample(samples((await scrape(ta, `Bearer ${TOKEN}`)).body), 'leadgate_http_request_duration_seconds_count', {
      route: '/api/health',
    });
  assert.equal(await count(a), 3);
  assert.equal(await count(b), undefined);
});
