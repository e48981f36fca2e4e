// Security headers (issue 11 finding 8): a strict Content-Security-Policy, no framing, nosniff and
// no Referer on the dashboard, Swagger UI and every API answer, errors included; no HSTS.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, call, expectProblem, forEachDatabase, newOperator } from '../../../test/helpers.js';
import { fakeBuild } from '../../../test/fake-build.js';

/** The CSP as a map of directive → sources. */
function csp(res: LightMyRequestResponse): Map<string, string[]> {
  const header = String(res.headers['content-security-policy'] ?? '');
  return new Map(
    header
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .filter((d) => d[0])
      .map(([name, ...sources]) => [name, sources]),
  );
}

/** The headers every answer carries, page, file, JSON or problem. */
function expectSecurityHeaders(res: LightMyRequestResponse, what: string) {
  const at = `${what} (${res.statusCode})`;
  assert.equal(res.headers['x-content-type-options'], 'nosniff', at);
  assert.equal(res.headers['x-frame-options'], 'DENY', at);
  assert.equal(res.headers['referrer-policy'], 'no-referrer', at);
  assert.equal(res.headers['strict-transport-security'], undefined, `${at}: no HSTS from a server on plain http`);
  const policy = csp(res);
  assert.deepEqual(policy.get('frame-ancestors'), ["'none'"], at);
  assert.deepEqual(policy.get('script-src'), ["'self'"], `${at}: scripts from this origin only, never inline or eval`);
  assert.deepEqual(policy.get('script-src-attr'), ["'none'"], at);
  assert.deepEqual(policy.get('default-src'), ["'self'"], at);
  assert.deepEqual(policy.get('object-src'), ["'none'"], at);
  assert.deepEqual(policy.get('base-uri'), ["'none'"], at);
  assert.equal(policy.has('upgrade-insecure-requests'), false, `${at}: plain http must keep working`);
  for (const [name, sources] of policy) {
    if (name !== 'style-src')
      assert.ok(
        !sources.includes("'unsafe-inline'") && !sources.includes("'unsafe-eval'"),
        `${at}: ${name} ${sources}`,
      );
  }
}

forEachDatabase('security headers', (engine) => {
  test('the dashboard page and its files carry the CSP, no framing, nosniff and no Referer', async (t) => {
    const ta = await buildTestApp(t, engine, { webDir: fakeBuild(t) });
    for (const url of ['/', '/settings/hosting', '/assets/index-AbC123.js']) {
      const res = await call(ta.app, null, { method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      expectSecurityHeaders(res, url);
    }
    const page = await call(ta.app, null, { method: 'GET', url: '/' });
    assert.deepEqual(
      csp(page).get('style-src'),
      ["'self'", "'unsafe-inline'"],
      'Mantine injects its styles at run time',
    );
    assert.deepEqual(csp(page).get('img-src'), ["'self'", 'data:'], 'the two-factor QR code is a data: URL');
    assert.deepEqual(csp(page).get('connect-src'), ["'self'"]);
  });

  test('API answers carry them too: JSON, problem+json errors (401, 403, 400, 404) and Swagger UI', async (t) => {
    const ta = await buildTestApp(t, engine, { webDir: fakeBuild(t) });
    const health = await call(ta.app, null, { method: 'GET', url: '/api/health' });
    assert.equal(health.statusCode, 200);
    expectSecurityHeaders(health, 'GET /api/health');
    const whoami = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/auth/whoami' });
    assert.equal(whoami.statusCode, 200);
    expectSecurityHeaders(whoami, 'GET /api/auth/whoami');

    const nobody = await newOperator(ta, []);
    const errors: [LightMyRequestResponse, number, string][] = [
      [await call(ta.app, null, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized'],
      [await call(ta.app, nobody.token, { method: 'GET', url: '/api/leads/search' }), 403, 'forbidden'],
      [
        await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?limit=0' }),
        400,
        'validation_failed',
      ],
      [await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/no-such-route' }), 404, 'not_found'],
      [
        await call(ta.app, ta.ownerToken, {
          method: 'POST',
          url: '/api/roles',
          payload: '{"name":',
          headers: { 'content-type': 'application/json' },
        }),
        400,
        'validation_failed',
      ],
    ];
    for (const [res, status, code] of errors) {
      expectProblem(res, status, code);
      expectSecurityHeaders(res, `${code} ${status}`);
    }
    const docs = await call(ta.app, null, { method: 'GET', url: '/api/docs/' });
    assert.equal(docs.statusCode, 200);
    expectSecurityHeaders(docs, 'GET /api/docs/');
  });

  test('a 429 from the rate limiter carries them too', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_IP: '1' } });
    await call(ta.app, null, { method: 'GET', url: '/api/openapi.json', remoteAddress: '203.0.113.9' });
    const res = await call(ta.app, null, { method: 'GET', url: '/api/openapi.json', remoteAddress: '203.0.113.9' });
    expectProblem(res, 429, 'rate_limited');
    expectSecurityHeaders(res, 'rate_limited 429');
  });
});
