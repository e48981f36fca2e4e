import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ALL_PERMISSIONS } from '../../auth/permissions.js';
import { buildApp } from '../../app.js';
import { openDatabase } from '../../db/database.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  login,
  newApiKey,
  newOperator,
  OWNER,
  type TestApp,
} from '../../../../test/helpers.js';

const tryLogin = (ta: TestApp, email: string, password: string, remoteAddress = '127.0.0.1') =>
  ta.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password }, remoteAddress });

function expectUnauthorized(res: LightMyRequestResponse) {
  const body = expectProblem(res, 401, 'unauthorized');
  assert.match(String(res.headers['www-authenticate']), /^Bearer\b/);
  return body;
}

function expectRateLimited(res: LightMyRequestResponse) {
  expectProblem(res, 429, 'rate_limited');
  const retryAfter = String(res.headers['retry-after']);
  assert.match(retryAfter, /^\d+$/, `Retry-After is a number of seconds: ${retryAfter}`);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 15 * 60, retryAfter);
  // Which failure budget refused, in the RateLimit headers' form (rule 18).
  assert.match(String(res.headers['ratelimit-policy']), /^"login-(account";q=5|ip";q=20);w=900$/);
  assert.equal(
    String(res.headers['ratelimit']),
    `"${/login-account/.test(String(res.headers['ratelimit-policy'])) ? 'login-account' : 'login-ip'}";r=0;t=${retryAfter}`,
  );
}

const whoami = (ta: TestApp, token: string) => call(ta.app, token, { method: 'GET', url: '/api/auth/whoami' });

async function failuresFor(ta: TestApp, email: string) {
  return (await ta.db.selectFrom('login_failures').select('id').where('email', '=', email).execute()).length;
}

/**
 * Another server instance on the same database, as a second process behind a load balancer has
 * it: its own connection (pool) and its own app.
 */
async function secondInstance(t: { after: (fn: () => Promise<void>) => void }, ta: TestApp) {
  const db = openDatabase(ta.config.database);
  const app = await buildApp(ta.config, db, { logStream: new Writable({ write: (_c, _e, cb) => cb() }) });
  t.after(async () => {
    await app.close();
    await db.destroy();
  });
  return app;
}

/** How many answers had each status, e.g. { 401: 5, 429: 25 }. */
const tally = (answers: LightMyRequestResponse[]) =>
  answers.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.statusCode]: (acc[r.statusCode] ?? 0) + 1 }), {});

forEachDatabase('auth', (engine) => {
  test('login answers a token, its expiry and the operator; the token works', async (t) => {
    const ta = await buildTestApp(t, engine);
    const before = Date.now();
    const res = await tryLogin(ta, OWNER.email, OWNER.password);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['expires_at', 'kind', 'operator', 'token']);
    assert.equal(body.kind, 'operator');
    assert.match(body.token, /^lgs_[0-9A-Za-z]{50}$/);
    const idleMs = ta.config.sessionIdleMinutes * 60_000;
    const expires = Date.parse(body.expires_at);
    assert.match(body.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.ok(expires >= before + idleMs - 1000 && expires <= Date.now() + idleMs + 1000, body.expires_at);
    assert.equal(body.operator.id, ta.ownerId);
    assert.equal(body.operator.email, OWNER.email);
    assert.equal(body.operator.status, 'active');
    assert.equal(body.operator.role_name, 'admin');
    assert.ok(!('password' in body.operator) && !('password_hash' in body.operator));
    assert.ok(!res.body.includes('$argon2'), 'no password hash in the answer');
    // The email is matched case-insensitively.
    assert.equal((await tryLogin(ta, OWNER.email.toUpperCase(), OWNER.password)).statusCode, 200);
    assert.equal((await whoami(ta, body.token)).statusCode, 200);
  });

  test('wrong password, unknown email and a disabled operator all get the same 401', async (t) => {
    const ta = await buildTestApp(t, engine);
    const wrong = expectUnauthorized(await tryLogin(ta, OWNER.email, 'not-the-password'));
    const unknown = expectUnauthorized(await tryLogin(ta, 'nobody@example.test', OWNER.password));
    assert.equal(wrong.detail, unknown.detail, 'the answer does not tell which part was wrong');

    const op = await newOperator(ta, ['roles:view']);
    const dis = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/operators/${op.id}`,
      payload: { status: 'disabled' },
    });
    assert.equal(dis.statusCode, 200);
    const disabled = expectUnauthorized(await tryLogin(ta, op.email, op.password));
    assert.equal(disabled.detail, wrong.detail);
    expectUnauthorized(await whoami(ta, op.token)); // and the session it had has ended
    // Malformed input is a 400, not a 401.
    const bad = expectProblem(
      await ta.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: 'not-an-email' } }),
      400,
      'validation_failed',
    );
    assert.ok(bad.errors?.some((e) => e.field === 'email'));
    assert.ok(bad.errors?.some((e) => e.field === 'password'));
  });

  test('429 rate_limited after 5 failures for one account, even with the right password', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    for (let i = 0; i < 5; i++) expectUnauthorized(await tryLogin(ta, op.email, 'wrong-password', `10.1.0.${i + 1}`));
    // Locked whatever the address, and whatever the password.
    expectRateLimited(await tryLogin(ta, op.email, op.password, '10.1.0.99'));
    expectRateLimited(await tryLogin(ta, op.email.toUpperCase(), 'wrong-password', '10.1.0.1'));
    // Only that account: others still log in from the same addresses.
    assert.equal((await tryLogin(ta, OWNER.email, OWNER.password, '10.1.0.1')).statusCode, 200);
    // A session made before the lock keeps working.
    assert.equal((await whoami(ta, op.token)).statusCode, 200);
  });

  test('429 rate_limited after 20 failures from one address across different emails', async (t) => {
    const ta = await buildTestApp(t, engine);
    const ip = '198.51.100.7';
    for (let i = 0; i < 20; i++)
      expectUnauthorized(await tryLogin(ta, `stranger-${i}@example.test`, 'wrong-password', ip));
    // No account reached its own limit, yet the address is blocked, even for a right password.
    expectRateLimited(await tryLogin(ta, OWNER.email, OWNER.password, ip));
    expectRateLimited(await tryLogin(ta, 'stranger-99@example.test', 'whatever', ip));
    // Another address is not.
    assert.equal((await tryLogin(ta, OWNER.email, OWNER.password, '198.51.100.8')).statusCode, 200);
  });

  test("a successful login clears the account's failure count", async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    const ip = '203.0.113.5';
    for (let i = 0; i < 4; i++) expectUnauthorized(await tryLogin(ta, op.email, 'wrong-password', ip));
    assert.equal(await failuresFor(ta, op.email), 4);
    assert.equal((await tryLogin(ta, op.email, op.password, ip)).statusCode, 200);
    assert.equal(await failuresFor(ta, op.email), 0);
    // Four more: had the first four still counted, this would be the 9th and locked.
    for (let i = 0; i < 4; i++) expectUnauthorized(await tryLogin(ta, op.email, 'wrong-password', ip));
    assert.equal((await tryLogin(ta, op.email, op.password, ip)).statusCode, 200);
  });

  test('30 concurrent wrong passwords for one account: at most 5 are judged (401), the rest 429', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    // From 30 addresses, so only the account's budget can stop them.
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => tryLogin(ta, op.email, `wrong-password-${i}`, `10.2.0.${i + 1}`)),
    );
    const counts = tally(answers);
    assert.ok((counts[401] ?? 0) <= 5, `judged: ${JSON.stringify(counts)}`);
    assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 30, JSON.stringify(counts));
    for (const r of answers) r.statusCode === 429 ? expectRateLimited(r) : expectUnauthorized(r);
    // Only the judged tries are failures; what budget is left is exactly that, then the lock.
    const judged = counts[401] ?? 0;
    assert.equal(await failuresFor(ta, op.email), judged, 'refused tries are not counted');
    for (let i = judged; i < 5; i++) expectUnauthorized(await tryLogin(ta, op.email, 'wrong-password', '10.2.1.1'));
    expectRateLimited(await tryLogin(ta, op.email, op.password, '10.2.1.2'));
  });

  test('30 concurrent wrong logins from one address across accounts: at most 20 are judged', async (t) => {
    const ta = await buildTestApp(t, engine);
    const ip = '198.51.100.77';
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => tryLogin(ta, `stranger-${i}@example.test`, 'wrong-password', ip)),
    );
    const counts = tally(answers);
    assert.ok((counts[401] ?? 0) <= 20, `judged: ${JSON.stringify(counts)}`);
    assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 30, JSON.stringify(counts));
    for (let i = counts[401] ?? 0; i < 20; i++)
      expectUnauthorized(await tryLogin(ta, `late-${i}@example.test`, 'wrong-password', ip));
    expectRateLimited(await tryLogin(ta, OWNER.email, OWNER.password, ip));
  });

  test('two server instances on one database share the failure budget, also when racing', async (t) => {
    const ta = await buildTestApp(t, engine);
    const other = await secondInstance(t, ta);
    const op = await newOperator(ta, ['roles:view']);
    const on = (app: typeof other, i: number) =>
      app.inject({
        method: 'POST',
        url: '/api/auth/login',
        payload: { email: op.email, password: `wrong-${i}` },
        remoteAddress: `10.3.0.${i + 1}`,
      });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => on(i % 2 ? other : ta.app, i)));
    const counts = tally(answers);
    assert.ok((counts[401] ?? 0) <= 5, `judged across both instances: ${JSON.stringify(counts)}`);
    assert.equal((counts[401] ?? 0) + (counts[429] ?? 0), 30, JSON.stringify(counts));
    assert.equal(await failuresFor(ta, op.email), counts[401] ?? 0);
    // One account, one budget, whichever instance judges: 3 failures here and 2 there lock it on both.
    await ta.db.deleteFrom('login_failures').where('email', '=', op.email).execute();
    for (let i = 0; i < 3; i++) expectUnauthorized(await on(ta.app, i));
    for (let i = 0; i < 2; i++) expectUnauthorized(await on(other, i));
    for (const app of [ta.app, other]) {
      expectRateLimited(
        await app.inject({
          method: 'POST',
          url: '/api/auth/login',
          payload: { email: op.email, password: op.password },
          remoteAddress: '10.3.1.1',
        }),
      );
    }
  });

  test('logout answers 204 and the token stops working', async (t) => {
    const ta = await buildTestApp(t, engine);
    const other = await login(ta.app, OWNER.email, OWNER.password);
    const res = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/auth/logout' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    expectUnauthorized(await whoami(ta, ta.ownerToken));
    expectUnauthorized(await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/auth/logout' }));
    // Only that session: another one of the same operator is untouched.
    assert.equal((await whoami(ta, other)).statusCode, 200);
    const sessions = await ta.db.selectFrom('sessions').select('id').where('operator_id', '=', ta.ownerId).execute();
    assert.equal(sessions.length, 1);
    assert.ok(other.startsWith(`lgs_${sessions[0].id}`));
    // No credential at all: 401.
    expectUnauthorized(await ta.app.inject({ method: 'POST', url: '/api/auth/logout' }));
  });

  test("whoami: a session's permissions are its role's; a key's are scopes ∩ role", async (t) => {
    const ta = await buildTestApp(t, engine);
    const owner = await whoami(ta, ta.ownerToken);
    assert.equal(owner.statusCode, 200);
    assert.equal(owner.json().via, 'session');
    assert.equal(owner.json().operator.id, ta.ownerId);
    assert.equal(owner.json().api_key, null);
    assert.deepEqual(owner.json().permissions, [...ALL_PERMISSIONS].sort());
    assert.equal(owner.json().admin, true);

    const op = await newOperator(ta, ['roles:view', 'audit:view', 'operators:edit']);
    const me = (await whoami(ta, op.token)).json();
    assert.equal(me.via, 'session');
    assert.equal(me.operator.id, op.id);
    assert.equal(me.operator.email, op.email);
    assert.deepEqual(me.permissions, ['audit:view', 'operators:edit', 'roles:view']);
    assert.equal(me.admin, false);
    // Holding every permission through a custom role is not being the admin.
    const strong = await newOperator(ta, [...ALL_PERMISSIONS]);
    assert.equal((await whoami(ta, strong.token)).json().admin, false);

    const key = await newApiKey(ta, ['audit:view'], { token: op.token, name: 'audit reader' });
    const viaKey = (await whoami(ta, key.secret)).json();
    assert.equal(viaKey.via, 'api_key');
    assert.equal(viaKey.operator.id, op.id);
    assert.deepEqual(viaKey.permissions, ['audit:view']);
    assert.equal(viaKey.admin, false);
    assert.deepEqual(viaKey.api_key, { id: key.id, name: 'audit reader', scopes: ['audit:view'], expires_at: null });
    expectUnauthorized(await ta.app.inject({ method: 'GET', url: '/api/auth/whoami' }));
  });

  test('a session idle for longer than SESSION_IDLE_MINUTES stops working', async (t) => {
    // One fixed instant for the test and the server (mocked Date): the idle times below are exact,
    // however long a loaded machine takes between the calls.
    t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-06-15T12:00:00.000Z') });
    const ta = await buildTestApp(t, engine, { env: { SESSION_IDLE_MINUTES: '5' } });
    const res = await tryLogin(ta, OWNER.email, OWNER.password);
    const { token, expires_at } = res.json();
    assert.equal(expires_at, '2026-06-15T12:05:00.000Z', 'expires 5 minutes after login');
    const id = token.slice(4, 16);
    const setLastSeen = (minutesAgo: number) =>
      ta.db
        .updateTable('sessions')
        .set({ last_seen_at: new Date(Date.now() - minutesAgo * 60_000).toISOString() })
        .where('id', '=', id)
        .execute();

    // 4 minutes idle: still valid, and the use moves last_seen_at forward.
    await setLastSeen(4);
    assert.equal((await whoami(ta, token)).statusCode, 200);
    const seen = await ta.db
      .selectFrom('sessions')
      .select('last_seen_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(seen.last_seen_at, '2026-06-15T12:00:00.000Z', 'refreshed to now');

    // 6 minutes idle: gone.
    await setLastSeen(6);
    expectUnauthorized(await whoami(ta, token));
    expectUnauthorized(await whoami(ta, token));
    assert.equal(await ta.db.selectFrom('sessions').select('id').where('id', '=', id).executeTakeFirst(), undefined);
    // Other sessions are not affected.
    assert.equal((await whoami(ta, ta.ownerToken)).statusCode, 200);
  });

  test('first-run setup: only while no operator exists, then 409', async (t) => {
    const ta = await buildTestApp(t, engine);
    const status = await ta.app.inject({ method: 'GET', url: '/api/setup' });
    assert.equal(status.statusCode, 200);
    assert.deepEqual(status.json(), { needed: false });
    const owner2 = { email: 'second-owner@example.test', name: 'Second', password: 'second-password-1' };
    expectProblem(await ta.app.inject({ method: 'POST', url: '/api/setup', payload: owner2 }), 409, 'conflict');
    assert.equal(
      await ta.db.selectFrom('operators').select('id').where('email', '=', owner2.email).executeTakeFirst(),
      undefined,
    );

    // Back to a fresh installation: no operator (its sessions and keys go with it), no marker.
    await ta.db.deleteFrom('sessions').execute();
    await ta.db.deleteFrom('operators').execute();
    await ta.db.deleteFrom('settings').where('key', '=', 'owner_created').execute();
    assert.deepEqual((await ta.app.inject({ method: 'GET', url: '/api/setup' })).json(), { needed: true });
    expectUnauthorized(await whoami(ta, ta.ownerToken));

    expectProblem(
      await ta.app.inject({
        method: 'POST',
        url: '/api/setup',
        payload: { email: 'bad', name: '', password: 'short' },
      }),
      400,
      'validation_failed',
    );
    const created = await ta.app.inject({ method: 'POST', url: '/api/setup', payload: owner2 });
    assert.equal(created.statusCode, 201, created.body);
    const body = created.json();
    assert.match(body.token, /^lgs_[0-9A-Za-z]{50}$/);
    assert.equal(body.operator.email, owner2.email);
    assert.equal(body.operator.role_name, 'admin');
    const me = await whoami(ta, body.token);
    assert.equal(me.statusCode, 200);
    assert.equal(me.json().operator.id, body.operator.id);
    assert.deepEqual(me.json().permissions, [...ALL_PERMISSIONS].sort());
    assert.equal((await tryLogin(ta, owner2.email, owner2.password)).statusCode, 200);

    assert.deepEqual((await ta.app.inject({ method: 'GET', url: '/api/setup' })).json(), { needed: false });
    const again = { email: 'third@example.test', name: 'Third', password: 'third-password-1' };
    expectProblem(await ta.app.inject({ method: 'POST', url: '/api/setup', payload: again }), 409, 'conflict');
    const operators = await ta.db.selectFrom('operators').select('email').execute();
    assert.deepEqual(
      operators.map((o) => o.email),
      [owner2.email],
    );
  });

  test('audit entries for auth.login, auth.login_failed, api_key.created and api_key.revoked', async (t) => {
    const ta = await buildTestApp(t, engine);
    const entries = (action: string) =>
      ta.db.selectFrom('audit_log').selectAll().where('action', '=', action).orderBy('id').execute();

    const logins = await entries('auth.login');
    assert.equal(logins.length, 1, 'the helper logged the owner in once');
    assert.equal(logins[0].actor_id, ta.ownerId);
    assert.equal(logins[0].actor_email, OWNER.email);
    assert.equal(logins[0].ip, '127.0.0.1');

    expectUnauthorized(await tryLogin(ta, OWNER.email, 'wrong-password', '192.0.2.10'));
    expectUnauthorized(await tryLogin(ta, 'ghost@example.test', 'wrong-password', '192.0.2.11'));
    const failed = await entries('auth.login_failed');
    assert.equal(failed.length, 2);
    assert.equal(failed[0].actor_id, ta.ownerId);
    assert.equal(failed[0].actor_email, OWNER.email);
    assert.equal(failed[0].ip, '192.0.2.10');
    assert.equal(JSON.parse(failed[0].details).reason, 'wrong_password');
    assert.equal(failed[1].actor_id, null);
    assert.equal(failed[1].actor_email, 'ghost@example.test');
    assert.equal(JSON.parse(failed[1].details).reason, 'unknown_email');
    for (const e of failed) assert.ok(!e.details.includes('wrong-password'), 'the tried password is not recorded');

    const key = await newApiKey(ta, ['roles:view'], { name: 'audited' });
    const createdEntries = await entries('api_key.created');
    assert.equal(createdEntries.length, 1);
    assert.equal(createdEntries[0].actor_id, ta.ownerId);
    assert.equal(createdEntries[0].via, 'session');
    assert.equal(createdEntries[0].target_type, 'api_key');
    assert.equal(createdEntries[0].target_id, key.id);
    assert.deepEqual(JSON.parse(createdEntries[0].details).scopes, ['roles:view']);
    assert.ok(!createdEntries[0].details.includes(key.secret), 'the secret is not in the audit log');

    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` })).statusCode,
      200,
    );
    const revoked = await entries('api_key.revoked');
    assert.equal(revoked.length, 1);
    assert.equal(revoked[0].actor_id, ta.ownerId);
    assert.equal(revoked[0].target_id, key.id);
    // A second revoke changes nothing and records nothing.
    await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` });
    assert.equal((await entries('api_key.revoked')).length, 1);

    // And the audit log serves them over HTTP.
    const page = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/audit-log?action=auth.login_failed' });
    assert.equal(page.statusCode, 200);
    assert.equal(page.json().data.length, 2);
    assert.ok(page.json().data.every((e: { action: string }) => e.action === 'auth.login_failed'));
  });
});
