// Request rate limits (API-CONTRACT rule 18): per session or API key and per client address,
// 429 rate_limited with Retry-After and the RateLimit / RateLimit-Policy headers; health exempt;
// intake and postbacks counted per address in buckets of their own; 0 turns a limit off.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, call, ENGINES, expectProblem, forEachDatabase, newApiKey } from '../../../test/helpers.js';
import { UNLIMITED_ROUTES } from './rate-limit.js';

const FAR = '203.0.113.7';
const OTHER = '198.51.100.9';

/** The 429 of rule 18: problem+json rate_limited, Retry-After in seconds, and both RateLimit fields. */
function expectRateLimited(res: LightMyRequestResponse, policy: string, max: number) {
  const body = expectProblem(res, 429, 'rate_limited');
  const retry = Number(res.headers['retry-after']);
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 60, `Retry-After ${res.headers['retry-after']}`);
  assert.ok(
    String(res.headers['ratelimit-policy']).includes(`"${policy}";q=${max};w=60`),
    `RateLimit-Policy ${res.headers['ratelimit-policy']}`,
  );
  assert.ok(String(res.headers.ratelimit).includes(`"${policy}";r=0;t=${retry}`), `RateLimit ${res.headers.ratelimit}`);
  assert.match(body.detail, /Too many requests/);
  assert.match(body.detail, new RegExp(`at most ${max} a minute`));
  return body;
}

forEachDatabase('rate limits', (engine) => {
  test('RATE_LIMIT_PER_KEY=3: the 4th request with one key is refused 429 rate_limited, another key still passes', async (t) => {
    let queries = 0;
    const ta = await buildTestApp(t, engine, {
      env: { RATE_LIMIT_PER_KEY: '3', RATE_LIMIT_PER_IP: '0' },
      onQuery: () => queries++,
    });
    // The owner's session makes both keys: 2 of its 3.
    const a = await newApiKey(ta, ['leads:view']);
    const b = await newApiKey(ta, ['leads:view']);
    const whoami = (token: string) => call(ta.app, token, { method: 'GET', url: '/api/auth/whoami' });

    for (let i = 1; i <= 3; i++) {
      const res = await whoami(a.secret);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['ratelimit-policy'], '"key";q=3;w=60', 'every answer under the limit says the policy');
      assert.match(String(res.headers.ratelimit), new RegExp(`^"key";r=${3 - i};t=\\d+$`));
    }
    const before = queries;
    const body = expectRateLimited(await whoami(a.secret), 'key', 3);
    assert.match(body.detail, /for this API key/);
    assert.equal(queries, before, 'refused before the auth hook: no database query');
    // Other methods and routes share the key's count; writes too.
    expectRateLimited(await call(ta.app, a.secret, { method: 'GET', url: '/api/leads/search' }), 'key', 3);

    const other = await whoami(b.secret);
    assert.equal(other.statusCode, 200, 'another key has its own count');
    assert.equal(other.headers.ratelimit?.toString().startsWith('"key";r=2;'), true);

    // A dashboard session is a credential like a key: the owner's session made 2 calls above.
    assert.equal((await whoami(ta.ownerToken)).statusCode, 200);
    assert.match(expectRateLimited(await whoami(ta.ownerToken), 'key', 3).detail, /for this session/);
  });

  test('RATE_LIMIT_PER_IP=3: the 4th request from one address is refused whatever it is, another address passes; health is exempt', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_IP: '3' } });
    const from = (remoteAddress: string, opts: { method?: 'GET' | 'POST'; url: string; token?: string | null }) =>
      call(ta.app, opts.token === undefined ? ta.ownerToken : opts.token, {
        method: opts.method ?? 'GET',
        url: opts.url,
        remoteAddress,
      });

    for (let i = 1; i <= 3; i++) {
      const res = await from(FAR, { url: '/api/auth/whoami' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['ratelimit-policy'], '"ip";q=3;w=60', 'only the address policy: the key limit is off');
      assert.match(String(res.headers.ratelimit), new RegExp(`^"ip";r=${3 - i};t=\\d+$`));
    }
    assert.match(expectRateLimited(await from(FAR, { url: '/api/auth/whoami' }), 'ip', 3).detail, /from this address/);
    // Anonymous, public and unknown paths from that address: refused too, before any 401 or 404.
    expectRateLimited(await from(FAR, { url: '/api/auth/whoami', token: null }), 'ip', 3);
    expectRateLimited(await from(FAR, { url: '/api/openapi.json', token: null }), 'ip', 3);
    expectRateLimited(await from(FAR, { url: '/api/no-such-route', token: null }), 'ip', 3);

    assert.equal((await from(OTHER, { url: '/api/auth/whoami' })).statusCode, 200, 'another address has its own count');
    for (let i = 0; i < 6; i++) {
      const health = await from(FAR, { url: '/api/health', token: null });
      assert.equal(health.statusCode, 200, 'load balancers may always ask');
      assert.equal(health.headers.ratelimit, undefined);
    }
    // The dashboard's files are not the API: not counted.
    assert.notEqual((await from(FAR, { url: '/settings/api', token: null })).statusCode, 429);

    // IPv6: one /64 is one client.
    for (let i = 0; i < 3; i++)
      assert.notEqual((await from('2001:db8:1:2::1', { url: '/api/auth/whoami' })).statusCode, 429);
    expectRateLimited(await from('2001:db8:1:2::ffff', { url: '/api/auth/whoami' }), 'ip', 3);
    assert.equal((await from('2001:db8:1:3::1', { url: '/api/auth/whoami' })).statusCode, 200);
  });

  test('lead intake and postbacks count per address in buckets of their own, never per key', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_KEY: '1', RATE_LIMIT_PER_IP: '3' } });
    const intake = () =>
      ta.app.inject({
        method: 'POST',
        url: '/api/intake/leads',
        remoteAddress: FAR,
        headers: { authorization: 'Bearer lgt_not-a-token' },
        payload: {},
      });
    const postback = () => ta.app.inject({ method: 'GET', url: '/api/postback/lgp_not-a-token', remoteAddress: FAR });
    // The address's API count is used up…
    for (let i = 0; i < 3; i++)
      await call(ta.app, null, { method: 'GET', url: '/api/auth/whoami', remoteAddress: FAR });
    expectRateLimited(
      await call(ta.app, null, { method: 'GET', url: '/api/auth/whoami', remoteAddress: FAR }),
      'ip',
      3,
    );
    // …and intake from it still reaches its own authentication (401 for this made-up token).
    for (let i = 0; i < 3; i++) {
      const res = await intake();
      assert.equal(res.statusCode, 401, res.body);
      assert.equal(res.headers['ratelimit-policy'], '"intake-ip";q=3;w=60', 'no key policy on intake');
    }
    expectRateLimited(await intake(), 'intake-ip', 3);
    const postbacks = [];
    for (let i = 0; i < 4; i++) postbacks.push(await postback());
    assert.ok(
      postbacks.slice(0, 3).every((r) => r.statusCode !== 429),
      postbacks.map((r) => r.statusCode).join(),
    );
    expectRateLimited(postbacks[3], 'postback-ip', 3);
  });

  test('0 turns a limit off: RATE_LIMIT_PER_KEY=0 and RATE_LIMIT_PER_IP=0 never answer 429 and send no RateLimit fields', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_IP: '0' } });
    const key = await newApiKey(ta, ['leads:view']);
    for (let i = 0; i < 30; i++) {
      const res = await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami', remoteAddress: FAR });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers.ratelimit, undefined);
      assert.equal(res.headers['ratelimit-policy'], undefined);
    }
  });

  test('behind a trusted proxy the client address is the one X-Forwarded-For names', async (t) => {
    const ta = await buildTestApp(t, engine, {
      env: { RATE_LIMIT_PER_KEY: '0', RATE_LIMIT_PER_IP: '2', TRUST_PROXY: '127.0.0.1' },
    });
    const via = (client: string) =>
      call(ta.app, null, { method: 'GET', url: '/api/openapi.json', headers: { 'x-forwarded-for': client } });
    assert.equal((await via(FAR)).statusCode, 200);
    assert.equal((await via(FAR)).statusCode, 200);
    expectRateLimited(await via(FAR), 'ip', 2);
    assert.equal((await via(OTHER)).statusCode, 200, 'the proxy itself is not the client');
  });

  test('both limits at once: the answer carries both policies, and the first one spent refuses', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { RATE_LIMIT_PER_KEY: '2', RATE_LIMIT_PER_IP: '5' } });
    const key = await newApiKey(ta, ['leads:view']);
    const res = await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami', remoteAddress: FAR });
    assert.equal(res.headers['ratelimit-policy'], '"key";q=2;w=60, "ip";q=5;w=60');
    assert.match(String(res.headers.ratelimit), /^"key";r=1;t=\d+, "ip";r=4;t=\d+$/);
    await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami', remoteAddress: FAR });
    expectRateLimited(
      await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami', remoteAddress: FAR }),
      'key',
      2,
    );
  });
});

test('the OpenAPI document declares 429 on every operation but the health checks', async (t) => {
  const ta = await buildTestApp(t, ENGINES[0]);
  const doc = (await ta.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  const missing: string[] = [];
  for (const [path, item] of Object.entries<Record<string, { responses?: Record<string, unknown> }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!op?.responses) continue;
      const has = '429' in op.responses;
      if (UNLIMITED_ROUTES.has(path) ? has : !has) missing.push(`${method.toUpperCase()} ${path}`);
    }
  }
  assert.deepEqual(missing, []);
});
