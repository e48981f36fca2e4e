import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  OWNER,
  type TestApp,
} from '../../../../test/helpers.js';
import { deviceOf } from './service.js';

const CHROME_LINUX =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

test('deviceOf reads browser and system from common user agents', () => {
  assert.equal(deviceOf(CHROME_LINUX), 'Chrome on Linux');
  assert.equal(deviceOf(SAFARI_IPHONE), 'Safari on iOS');
  assert.equal(
    deviceOf(
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
    ),
    'Edge on Windows',
  );
  assert.equal(
    deviceOf('Mozilla/5.0 (Macintosh; Intel Mac OS X 14.5; rv:128.0) Gecko/20100101 Firefox/128.0'),
    'Firefox on macOS',
  );
  assert.equal(
    deviceOf(
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
    ),
    'Chrome on Android',
  );
  assert.equal(deviceOf('curl/8.5.0'), 'curl');
  assert.equal(deviceOf('lightMyRequest'), 'Unknown device');
  assert.equal(deviceOf(''), 'Unknown client');
});

const loginAs = async (
  ta: TestApp,
  email: string,
  password: string,
  userAgent: string,
  remoteAddress = '127.0.0.1',
) => {
  const res = await ta.app.inject({
    method: 'POST',
    url: '/api/auth/login',
    payload: { email, password },
    headers: { 'user-agent': userAgent },
    remoteAddress,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().token as string;
};

const idOf = (token: string) => token.slice(4, 16); // lgs_ + the 12-character lookup id

const list = async (ta: TestApp, token: string) => {
  const res = await call(ta.app, token, { method: 'GET', url: '/api/profile/sessions' });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as {
    id: string;
    device: string;
    ip: string;
    current: boolean;
    user_agent: string;
    created_at: string;
    last_seen_at: string;
  }[];
};

forEachDatabase('profile sessions', (engine) => {
  test('GET lists your live sessions only, with device, IP and which one is this', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const laptop = await loginAs(ta, op.email, op.password, CHROME_LINUX, '203.0.113.7');
    const phone = await loginAs(ta, op.email, op.password, SAFARI_IPHONE);
    await loginAs(ta, OWNER.email, OWNER.password, CHROME_LINUX); // someone else's

    const rows = await list(ta, laptop);
    assert.deepEqual(rows.map((r) => r.id).sort(), [op.token, laptop, phone].map(idOf).sort());
    const mine = rows.find((r) => r.current)!;
    assert.equal(mine.id, idOf(laptop));
    assert.equal(rows.filter((r) => r.current).length, 1);
    assert.equal(mine.device, 'Chrome on Linux');
    assert.equal(mine.ip, '203.0.113.7');
    assert.equal(rows.find((r) => r.id === idOf(phone))!.device, 'Safari on iOS');
    assert.ok(!JSON.stringify(rows).includes(laptop.slice(16)), 'no secret part of any token');

    // A session idle past the timeout has ended: not listed.
    const old = new Date(Date.now() - (ta.config.sessionIdleMinutes + 1) * 60_000).toISOString();
    await ta.db.updateTable('sessions').set({ last_seen_at: old }).where('id', '=', idOf(phone)).execute();
    assert.deepEqual((await list(ta, laptop)).map((r) => r.id).sort(), [op.token, laptop].map(idOf).sort());
  });

  test('DELETE one: yours only (404 otherwise); the token is refused on its next request', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const other = await loginAs(ta, op.email, op.password, SAFARI_IPHONE);
    const del = (token: string, id: string) =>
      call(ta.app, token, { method: 'DELETE', url: `/api/profile/sessions/${id}` });

    expectProblem(await del(op.token, idOf(ta.ownerToken)), 404, 'not_found');
    expectProblem(await del(op.token, 'no-such-session'), 404, 'not_found');
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/profile' })).statusCode,
      200,
      'the owner is still signed in',
    );

    assert.equal((await call(ta.app, other, { method: 'GET', url: '/api/profile' })).statusCode, 200);
    const res = await del(op.token, idOf(other));
    assert.equal(res.statusCode, 204, res.body);
    expectProblem(await call(ta.app, other, { method: 'GET', url: '/api/profile' }), 401, 'unauthorized');
    expectProblem(await del(op.token, idOf(other)), 404, 'not_found');
    assert.deepEqual(
      (await list(ta, op.token)).map((r) => r.id),
      [idOf(op.token)],
    );
    const audit = await ta.db
      .selectFrom('audit_log')
      .selectAll()
      .where('action', '=', 'profile.session_revoked')
      .execute();
    assert.equal(audit.length, 1);
    assert.equal(audit[0].target_id, idOf(other));
  });

  test('revoke-others: every other session of yours ends; this one, other people and keys stay', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const a = await loginAs(ta, op.email, op.password, CHROME_LINUX);
    const b = await loginAs(ta, op.email, op.password, SAFARI_IPHONE);
    const key = await newApiKey(ta, ['leads:view'], { token: op.token });

    const res = await call(ta.app, a, { method: 'POST', url: '/api/profile/sessions/revoke-others' });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(res.json(), { revoked: 2 });
    for (const gone of [op.token, b])
      expectProblem(await call(ta.app, gone, { method: 'GET', url: '/api/profile' }), 401, 'unauthorized');
    assert.equal((await call(ta.app, a, { method: 'GET', url: '/api/profile' })).statusCode, 200);
    assert.equal((await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/profile' })).statusCode, 200);
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' })).statusCode, 200);
    assert.deepEqual((await call(ta.app, a, { method: 'POST', url: '/api/profile/sessions/revoke-others' })).json(), {
      revoked: 0,
    });
  });

  test('session only: keys get 403 session_required; no credential 401', async (t) => {
    const ta = await buildTestApp(t, engine);
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    const key = await newApiKey(ta, all);
    const routes = [
      { method: 'GET', url: '/api/profile/sessions' },
      { method: 'DELETE', url: `/api/profile/sessions/${idOf(ta.ownerToken)}` },
      { method: 'POST', url: '/api/profile/sessions/revoke-others' },
    ] as const;
    for (const r of routes) {
      expectProblem(await call(ta.app, key.secret, r), 403, 'session_required');
      expectProblem(await call(ta.app, null, r), 401, 'unauthorized');
    }
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/profile' })).statusCode,
      200,
      'the key revoked nothing',
    );
  });

  test('the list pages with limit and cursor, newest sign-in first, each session once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    for (let i = 0; i < 4; i++) await loginAs(ta, op.email, op.password, CHROME_LINUX);
    const seen: { id: string; created_at: string }[] = [];
    let cursor: string | null = null;
    do {
      const url: string = `/api/profile/sessions?limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await call(ta.app, op.token, { method: 'GET', url });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.json().data.length <= 2);
      seen.push(...res.json().data);
      cursor = res.json().next_cursor;
    } while (cursor);
    assert.equal(seen.length, 5, 'the four sign-ins and the session newOperator made');
    assert.equal(new Set(seen.map((s) => s.id)).size, 5);
    const times = seen.map((s) => s.created_at);
    assert.deepEqual(times, [...times].sort().reverse());
    expectProblem(
      await call(ta.app, op.token, { method: 'GET', url: '/api/profile/sessions?cursor=nonsense' }),
      400,
      'validation_failed',
    );
  });
});
