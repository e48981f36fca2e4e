// Issue 11, findings 1, 9 and 10 (sessions): access follows the route that runs whatever the
// path's spelling, refused request targets, tokens never logged however the URL spells them,
// sessions with an absolute lifetime.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { badRequestTarget } from '../src/server/http/request-target.js';
import { makeWorld } from './distribution-world.js';
import { insertLeads } from './fixtures.js';
import { buildTestApp, call, expectProblem, forEachDatabase, login, OWNER } from './helpers.js';
import { sendRaw } from './raw-http.js';

describe('request targets', () => {
  test('plain origin-form paths pass, whatever they encode besides slashes and dots', () => {
    for (const ok of [
      '/api/operators',
      '/%61pi/operators',
      '/api/leads/search?q=a/../b',
      '/api/postback/%6cgp_x',
      '/',
      '/api/x%20y',
    ]) {
      assert.equal(badRequestTarget(ok), null, ok);
    }
  });

  test('absolute-form, "*", encoded slashes, backslashes, dot segments and NUL are refused', () => {
    const refused = [
      'http://127.0.0.1/api/operators',
      'HTTP://x/api',
      '*',
      '//api/operators',
      '/api%2foperators',
      '/api%2Foperators',
      '/api%5coperators',
      '/api\\operators',
      '/./api/operators',
      '/x/../api/operators',
      '/api/%2e%2e/api/operators',
      '/api/.%2E/api',
      '/api/%2E/operators',
      '/api/operators/..',
      '/api/operators%00',
    ];
    for (const bad of refused) assert.ok(badRequestTarget(bad), bad);
  });
});

forEachDatabase('access follows the route that runs', (engine) => {
  test('GET /%61pi/operators needs a credential like /api/operators; with one, it is the same route', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const url of ['/%61pi/operators', '/ap%69/operators', '/%61%70%69/operators']) {
      expectProblem(await ta.app.inject({ method: 'GET', url }), 401, 'unauthorized');
      const res = await call(ta.app, ta.ownerToken, { method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.ok(Array.isArray(res.json().data));
    }
  });

  test('the IP allow-list applies to every spelling of a protected path', async (t) => {
    const ta = await buildTestApp(t, engine);
    const set = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/settings/security',
      payload: { ip_allowlist: ['127.0.0.0/8'] },
    });
    assert.equal(set.statusCode, 200, set.body);
    for (const url of ['/api/operators', '/%61pi/operators', '/api/no-such-route', '/%61pi/no-such-route']) {
      const res = await call(ta.app, ta.ownerToken, { method: 'GET', url, remoteAddress: '203.0.113.9' });
      expectProblem(res, 403, 'ip_not_allowed');
    }
  });

  test('a refused target answers 400 naming the url over real HTTP, and runs nothing', async (t) => {
    const ta = await buildTestApp(t, engine);
    await ta.app.listen({ host: '127.0.0.1', port: 0 });
    const port = (ta.app.server.address() as { port: number }).port;
    const before = await ta.db.selectFrom('traffic_providers').select('id').execute();
    const targets = [
      '/api/x/../traffic-providers',
      '/api%2ftraffic-providers',
      '/api/%2e%2e/api/traffic-providers',
      `http://127.0.0.1:${port}/api/traffic-providers`,
    ];
    for (const target of targets) {
      const res = await sendRaw(
        port,
        'POST',
        target,
        { authorization: `Bearer ${ta.ownerToken}` },
        JSON.stringify({ name: 'Sneaky' }),
      );
      assert.equal(res.status, 400, `${target}: ${res.body}`);
      const p = JSON.parse(res.body);
      assert.equal(p.code, 'validation_failed');
      assert.equal(p.errors[0].field, 'url');
    }
    assert.deepEqual(await ta.db.selectFrom('traffic_providers').select('id').execute(), before);
  });

  test('a percent-encoded postback token works as the token it spells, and neither spelling reaches a log line', async (t) => {
    const ta = await buildTestApp(t, engine);
    const world = await makeWorld(t, ta, [{}]);
    const [a] = world.partners;
    const [lead] = await insertLeads(ta.db, [
      {
        traffic_provider_id: world.providerId,
        campaign_id: world.campaignId,
        flow_id: world.flowId,
        partner_id: a.id,
        status: 'delivered',
        partner_lead_id: 'P-1',
      },
    ]);
    const encoded = `%${'l'.charCodeAt(0).toString(16)}${a.postbackToken.slice(1)}`;
    const res = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${encoded}?lead_id=${lead}&sale_status=Called&api_key=${a.postbackToken}`,
    });
    assert.equal(res.statusCode, 200, res.body);
    const secret = a.postbackToken.slice(16, 48);
    const logs = ta.logs.join('\n');
    assert.ok(logs.includes('/api/postback/[redacted]'), 'the request is logged, token redacted');
    assert.ok(!logs.includes(secret), 'the token secret is in a log line');
    assert.ok(!logs.includes(encoded.slice(3, 20)), 'the encoded token is in a log line');
  });
});

forEachDatabase('sessions have an absolute lifetime', (engine) => {
  test('a session in constant use ends SESSION_MAX_HOURS after sign-in', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { SESSION_MAX_HOURS: '2' } });
    const token = await login(ta.app, OWNER.email, OWNER.password);
    const id = token.slice(4, 16);
    const signedIn = (hoursAgo: number) =>
      ta.db
        .updateTable('sessions')
        .set({ created_at: new Date(Date.now() - hoursAgo * 3_600_000).toISOString() })
        .where('id', '=', id)
        .execute();
    await signedIn(1.9);
    assert.equal((await call(ta.app, token, { method: 'GET', url: '/api/auth/whoami' })).statusCode, 200);
    await signedIn(2.1);
    const res = await call(ta.app, token, { method: 'GET', url: '/api/auth/whoami' });
    assert.match(expectProblem(res, 401, 'unauthorized').detail, /maximum lifetime/);
    assert.equal(await ta.db.selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst(), undefined);
  });
});
