import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { hashSecret, issueToken } from '../../auth/credentials.js';
import { ALL_PERMISSIONS, isWriteAction } from '../../auth/permissions.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';

// Token layout (see auth/credentials.ts): lg_ + id(12) + secret(32) + checksum(6).
const secretPartOf = (token: string) => token.slice('lg_'.length + 12, 'lg_'.length + 12 + 32);

function expectUnauthorized(res: LightMyRequestResponse) {
  const body = expectProblem(res, 401, 'unauthorized');
  assert.match(String(res.headers['www-authenticate']), /^Bearer\b/, 'a 401 carries WWW-Authenticate: Bearer');
  return body;
}

const getKey = (ta: TestApp, id: string, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'GET', url: `/api/api-keys/${id}` });

async function countKeys(ta: TestApp, operatorId?: string) {
  let q = ta.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<string | number>().as('n'));
  if (operatorId) q = q.where('operator_id', '=', operatorId);
  return Number((await q.executeTakeFirstOrThrow()).n);
}

/** Routes of the running app, with every path parameter filled in. */
function routes(ta: TestApp, pick: (r: TestApp['app']['routeTable'][number]) => boolean) {
  return ta.app.routeTable
    .filter((r) => !r.hidden && pick(r))
    .map((r) => ({
      method: r.method,
      url: r.url.replace(/:\w+/g, 'no-such-id').replace(/\*/g, 'x'),
      access: r.access,
    }));
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

forEachDatabase('API keys', (engine) => {
  test('a key is made once with its secret, and works as a Bearer token', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, ['roles:view']);
    assert.match(key.secret, /^lg_[0-9A-Za-z]{50}$/);
    assert.equal(key.prefix, `lg_${key.id}`);
    assert.ok(key.secret.startsWith(key.prefix as string));
    assert.equal(key.status, 'active');
    assert.equal(key.last_used_at, null);
    const res = await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' });
    assert.equal(res.statusCode, 200);
    const who = await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' });
    assert.equal(who.json().via, 'api_key');
    assert.deepEqual(who.json().permissions, ['roles:view']);
  });

  test('401 unauthorized with WWW-Authenticate for a missing, non-Bearer or malformed credential', async (t) => {
    const queries: string[] = [];
    const ta = await buildTestApp(t, engine, { onQuery: (sql) => queries.push(sql) });
    const key = await newApiKey(ta, ['roles:view']);
    const get = (headers: Record<string, string>) => ta.app.inject({ method: 'GET', url: '/api/roles', headers });

    expectUnauthorized(await get({}));
    expectUnauthorized(
      await get({ authorization: `Basic ${Buffer.from('owner@example.test:owner-password-1').toString('base64')}` }),
    );
    expectUnauthorized(await get({ authorization: key.secret })); // no scheme at all
    expectUnauthorized(await get({ authorization: 'Bearer' }));
    expectUnauthorized(await get({ authorization: `Bearer ${key.secret}a` })); // one character too long
    expectUnauthorized(await get({ authorization: `Bearer ${key.secret.slice(0, -1)}` })); // one too short
    expectUnauthorized(await get({ authorization: `Bearer ${key.secret.replace('lg_', 'lgx_')}` }));

    // The right shape, a wrong checksum: refused on the checksum alone, without a single query.
    const last = key.secret.at(-1)!;
    const badChecksum = key.secret.slice(0, -1) + (last === 'a' ? 'b' : 'a');
    queries.length = 0;
    expectUnauthorized(await get({ authorization: `Bearer ${badChecksum}` }));
    assert.deepEqual(queries, [], 'a malformed key touches no database');
    expectUnauthorized(await get({}));
    assert.deepEqual(queries, [], 'a missing credential touches no database');

    // The capture works: the genuine key does look itself up.
    queries.length = 0;
    assert.equal((await get({ authorization: `Bearer ${key.secret}` })).statusCode, 200);
    assert.ok(queries.some((sql) => /api_keys/.test(sql)));
  });

  test('401 for an unknown, expired or revoked key, and for a session after logout', async (t) => {
    const ta = await buildTestApp(t, engine);

    // Well-formed with a valid checksum, but never stored.
    const unknown = issueToken('lg_').token;
    expectUnauthorized(await call(ta.app, unknown, { method: 'GET', url: '/api/roles' }));
    expectUnauthorized(await call(ta.app, issueToken('lgs_').token, { method: 'GET', url: '/api/roles' }));

    // Expired: works while in the future, refused once expires_at has passed.
    // An hour ahead: "still in the future" must not depend on how fast the next calls run.
    const expiring = await newApiKey(ta, ['roles:view'], {
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    assert.equal(expiring.status, 'active');
    assert.equal((await call(ta.app, expiring.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    const past = new Date(Date.now() - 1_000).toISOString();
    await ta.db.updateTable('api_keys').set({ expires_at: past }).where('id', '=', expiring.id).execute();
    expectUnauthorized(await call(ta.app, expiring.secret, { method: 'GET', url: '/api/roles' }));
    const expiredRecord = await getKey(ta, expiring.id);
    assert.equal(expiredRecord.statusCode, 200);
    assert.equal(expiredRecord.json().status, 'expired');
    assert.equal(expiredRecord.json().expires_at, past);

    // Revoked: the very next request fails.
    const key = await newApiKey(ta, ['roles:view']);
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    const revoked = await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` });
    assert.equal(revoked.statusCode, 200);
    assert.equal(revoked.json().status, 'revoked');
    assert.ok(revoked.json().revoked_at);
    expectUnauthorized(await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' }));
    expectUnauthorized(await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' }));
    // Revoking again changes nothing.
    const again = await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().revoked_at, revoked.json().revoked_at);

    // A session token after logout.
    const op = await newOperator(ta, ['roles:view']);
    assert.equal((await call(ta.app, op.token, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal((await call(ta.app, op.token, { method: 'POST', url: '/api/auth/logout' })).statusCode, 204);
    expectUnauthorized(await call(ta.app, op.token, { method: 'GET', url: '/api/roles' }));
    expectUnauthorized(await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys' }));
  });

  test("a disabled or deleted operator's keys stop working at once", async (t) => {
    const ta = await buildTestApp(t, engine);
    const disabledOp = await newOperator(ta, ['roles:view']);
    const k1 = await newApiKey(ta, ['roles:view'], { token: disabledOp.token });
    assert.equal((await call(ta.app, k1.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    const dis = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/operators/${disabledOp.id}`,
      payload: { status: 'disabled' },
    });
    assert.equal(dis.statusCode, 200);
    assert.equal(dis.json().status, 'disabled');
    expectUnauthorized(await call(ta.app, k1.secret, { method: 'GET', url: '/api/roles' }));
    expectUnauthorized(await call(ta.app, k1.secret, { method: 'GET', url: '/api/auth/whoami' }));
    expectUnauthorized(await call(ta.app, disabledOp.token, { method: 'GET', url: '/api/roles' }));

    const deletedOp = await newOperator(ta, ['roles:view']);
    const k2 = await newApiKey(ta, ['roles:view'], { token: deletedOp.token });
    assert.equal((await call(ta.app, k2.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${deletedOp.id}` })).statusCode,
      204,
    );
    expectUnauthorized(await call(ta.app, k2.secret, { method: 'GET', url: '/api/roles' }));
    assert.equal(await countKeys(ta, deletedOp.id), 0, "a deleted operator's keys are gone");
  });

  test('403 insufficient_scope: a view-only key is refused every write, and reads outside its scopes', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    const viewScopes = ALL_PERMISSIONS.filter((p) => !isWriteAction(p));
    const viewKey = await newApiKey(ta, viewScopes);
    const roleBefore = await ta.db
      .selectFrom('roles')
      .selectAll()
      .where('id', '=', op.roleId)
      .executeTakeFirstOrThrow();

    // The writes named in the contract, on real records, and nothing changes.
    const named = [
      { method: 'POST', url: '/api/roles', payload: { name: 'sneaky', permissions: ['roles:view'] } },
      { method: 'PATCH', url: `/api/roles/${op.roleId}`, payload: { permissions: ALL_PERMISSIONS } },
      { method: 'DELETE', url: `/api/roles/${op.roleId}` },
      {
        method: 'POST',
        url: '/api/operators',
        payload: { email: 'x@example.test', name: 'X', password: 'password-long-1', role_id: op.roleId },
      },
      { method: 'PATCH', url: `/api/operators/${op.id}`, payload: { status: 'disabled' } },
      { method: 'DELETE', url: `/api/operators/${op.id}` },
    ] as const;
    for (const r of named) {
      const res = await call(ta.app, viewKey.secret, { ...r });
      // Creating an operator is for sessions only: a key is refused that before its scopes are read.
      expectProblem(
        res,
        403,
        r.method === 'POST' && r.url === '/api/operators' ? 'session_required' : 'insufficient_scope',
      );
    }
    assert.deepEqual(
      await ta.db.selectFrom('roles').selectAll().where('id', '=', op.roleId).executeTakeFirstOrThrow(),
      roleBefore,
    );
    assert.equal(
      await ta.db.selectFrom('roles').select('id').where('name', '=', 'sneaky').executeTakeFirst(),
      undefined,
    );
    assert.equal(
      (await ta.db.selectFrom('operators').select('status').where('id', '=', op.id).executeTakeFirstOrThrow()).status,
      'active',
    );
    assert.equal(
      await ta.db.selectFrom('operators').select('id').where('email', '=', 'x@example.test').executeTakeFirst(),
      undefined,
    );

    // And every other write route the server has.
    const writes = routes(ta, (r) => WRITES.has(r.method) && !!r.access.permission && !r.access.sessionOnly);
    assert.ok(writes.length >= named.length);
    for (const r of writes) {
      const res = await call(ta.app, viewKey.secret, { method: r.method as 'POST', url: r.url, payload: {} });
      assert.equal(res.json().code, 'insufficient_scope', `${r.method} ${r.url}: ${res.body}`);
      expectProblem(res, 403, 'insufficient_scope');
    }

    // A key needs the matching view scope to read a module.
    const rolesKey = await newApiKey(ta, ['roles:view']);
    assert.equal((await call(ta.app, rolesKey.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    expectProblem(
      await call(ta.app, rolesKey.secret, { method: 'GET', url: '/api/operators' }),
      403,
      'insufficient_scope',
    );
    expectProblem(
      await call(ta.app, rolesKey.secret, { method: 'GET', url: `/api/operators/${op.id}` }),
      403,
      'insufficient_scope',
    );
    expectProblem(
      await call(ta.app, rolesKey.secret, { method: 'GET', url: '/api/audit-log' }),
      403,
      'insufficient_scope',
    );
    const reads = routes(
      ta,
      (r) =>
        r.method === 'GET' && !!r.access.permission && r.access.permission !== 'roles:view' && !r.access.sessionOnly,
    );
    for (const r of reads) {
      const res = await call(ta.app, rolesKey.secret, { method: 'GET', url: r.url });
      assert.equal(res.json().code, 'insufficient_scope', `GET ${r.url}: ${res.body}`);
    }
  });

  test('403 scope_not_held: a scope the role lacks cannot be granted, and no key is made', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view', 'operators:view']);
    const before = await countKeys(ta);
    for (const scopes of [['roles:edit'], ['roles:view', 'audit:view'], ['operators:view', 'settings:edit']]) {
      const res = await call(ta.app, op.token, {
        method: 'POST',
        url: '/api/api-keys',
        payload: { name: 'too wide', scopes },
      });
      const body = expectProblem(res, 403, 'scope_not_held');
      assert.match(body.detail, new RegExp(scopes.at(-1)!));
    }
    assert.equal(await countKeys(ta), before, 'no key row was made');
    // What the role holds can be granted.
    const ok = await newApiKey(ta, ['roles:view', 'operators:view'], { token: op.token });
    assert.deepEqual(ok.scopes, ['operators:view', 'roles:view']);
    assert.equal(await countKeys(ta), before + 1);
  });

  test('400 validation_failed names the field: unknown scope, empty scopes, past expires_at, missing name', async (t) => {
    const ta = await buildTestApp(t, engine);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'k', scopes: ['roles:delete'] }, /^scopes/],
      [{ name: 'k', scopes: ['nonsense'] }, /^scopes/],
      [{ name: 'k', scopes: [] }, /^scopes$/],
      [{ name: 'k', scopes: ['roles:view'], expires_at: new Date(Date.now() - 60_000).toISOString() }, /^expires_at$/],
      [{ name: 'k', scopes: ['roles:view'], expires_at: 'tomorrow' }, /^expires_at$/],
      [{ scopes: ['roles:view'] }, /^name$/],
      [{ name: '   ', scopes: ['roles:view'] }, /^name$/],
    ];
    for (const [payload, field] of cases) {
      const res = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/api-keys', payload });
      const body = expectProblem(res, 400, 'validation_failed');
      assert.ok(
        body.errors?.some((e) => field.test(e.field) && e.message),
        `${JSON.stringify(payload)} → ${res.body}`,
      );
    }
    assert.equal(await countKeys(ta), 0);
  });

  test('403 session_required: a key cannot use any session-only route', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, [...ALL_PERMISSIONS]); // every scope, so only the credential type is refused
    const own = await newApiKey(ta, ['roles:view']);
    const named = [
      { method: 'GET', url: '/api/api-keys' },
      { method: 'POST', url: '/api/api-keys', payload: { name: 'minted by a key', scopes: ['roles:view'] } },
      { method: 'GET', url: `/api/api-keys/${own.id}` },
      { method: 'POST', url: `/api/api-keys/${own.id}/revoke` },
      { method: 'GET', url: '/api/settings/security' },
      { method: 'PUT', url: '/api/settings/security', payload: { ip_allowlist: ['0.0.0.0/0'] } },
      { method: 'GET', url: '/api/profile' },
      { method: 'PATCH', url: '/api/profile', payload: { name: 'Renamed by key' } },
      {
        method: 'POST',
        url: '/api/profile/password',
        payload: { current_password: 'owner-password-1', new_password: 'changed-by-a-key' },
      },
      { method: 'POST', url: '/api/auth/logout' },
    ] as const;
    for (const r of named) {
      expectProblem(await call(ta.app, key.secret, { ...r }), 403, 'session_required');
    }
    // Nothing happened: no key minted, the other key still active, settings and profile untouched.
    assert.equal(await countKeys(ta), 2);
    assert.equal((await getKey(ta, own.id)).json().status, 'active');
    assert.equal(
      await ta.db.selectFrom('settings').select('key').where('key', '=', 'ip_allowlist').executeTakeFirst(),
      undefined,
    );
    assert.equal(
      (await ta.db.selectFrom('operators').select('name').where('id', '=', ta.ownerId).executeTakeFirstOrThrow()).name,
      'Owner',
    );
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/profile' })).statusCode,
      200,
      'the session survived',
    );

    // Every session-only route the server has, including ones added later (the portal's refuse
    // every operator credential with 401 first: portal.test.ts tests its keys on them).
    const sessionOnly = routes(ta, (r) => !!r.access.sessionOnly && !r.access.portal);
    for (const r of named)
      assert.ok(
        ta.app.routeTable.some((x) => x.method === r.method && x.access.sessionOnly),
        `${r.method} ${r.url} is session-only`,
      );
    for (const r of sessionOnly) {
      const res = await call(ta.app, key.secret, {
        method: r.method as 'GET',
        url: r.url,
        ...(WRITES.has(r.method) ? { payload: {} } : {}),
      });
      assert.equal(res.json().code, 'session_required', `${r.method} ${r.url}: ${res.body}`);
      expectProblem(res, 403, 'session_required');
    }
  });

  test("a key loses rights the moment its operator's role does, and never exceeds the role", async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view', 'operators:view', 'audit:view']);
    const key = await newApiKey(ta, ['roles:view', 'operators:view'], { token: op.token });
    const whoami = async () => (await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' })).json();
    assert.deepEqual(
      (await whoami()).permissions,
      ['operators:view', 'roles:view'],
      'scopes ∩ role, not the whole role',
    );
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);

    const setRole = async (permissions: string[]) => {
      const res = await call(ta.app, ta.ownerToken, {
        method: 'PATCH',
        url: `/api/roles/${op.roleId}`,
        payload: { permissions },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    await setRole(['operators:view', 'audit:view']);
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' }), 403, 'forbidden');
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: `/api/roles/${op.roleId}` }), 403, 'forbidden');
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/operators' })).statusCode, 200);
    const who = await whoami();
    assert.deepEqual(who.permissions, ['operators:view'], 'the key never exceeds the role');
    assert.deepEqual(who.api_key.scopes, ['operators:view', 'roles:view'], 'the key keeps its scopes');

    await setRole(['roles:view', 'operators:view', 'audit:view']);
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.deepEqual((await whoami()).permissions, ['operators:view', 'roles:view']);

    // Moving the operator to another role applies at once too.
    const other = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'audit only', permissions: ['audit:view'] },
    });
    assert.equal(other.statusCode, 201);
    assert.equal(
      (
        await call(ta.app, ta.ownerToken, {
          method: 'PATCH',
          url: `/api/operators/${op.id}`,
          payload: { role_id: other.json().id },
        })
      ).statusCode,
      200,
    );
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: '/api/operators' }), 403, 'forbidden');
    assert.deepEqual((await whoami()).permissions, []);
  });

  test('last_used_at: null before use, set on first use, then written at most once a minute', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, ['roles:view']);
    assert.equal(key.last_used_at, null);
    assert.equal((await getKey(ta, key.id)).json().last_used_at, null, 'looking at a key is not using it');

    const t0 = Date.now();
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    const first = (await getKey(ta, key.id)).json().last_used_at as string;
    assert.ok(first, 'set right after the first use');
    assert.ok(Date.parse(first) >= t0 - 1000 && Date.parse(first) <= Date.now() + 1000, first);

    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal(
      (await getKey(ta, key.id)).json().last_used_at,
      first,
      'a second use within a minute does not rewrite it',
    );

    const old = new Date(Date.now() - 2 * 60_000).toISOString();
    await ta.db.updateTable('api_keys').set({ last_used_at: old }).where('id', '=', key.id).execute();
    const t1 = Date.now();
    assert.equal((await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' })).statusCode, 200);
    const later = (await getKey(ta, key.id)).json().last_used_at as string;
    assert.notEqual(later, old, 'a value older than a minute is rewritten');
    assert.ok(Date.parse(later) >= t1 - 1000, later);

    // A refused request (revoked key) does not count as use.
    await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` });
    await ta.db.updateTable('api_keys').set({ last_used_at: old }).where('id', '=', key.id).execute();
    expectUnauthorized(await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' }));
    assert.equal((await getKey(ta, key.id)).json().last_used_at, old);
  });

  test('the secret is in the creating response only, in no log line, and only its hash is stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    const create = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/api-keys',
      payload: { name: 'leak check', scopes: ['roles:view', 'audit:view'] },
    });
    assert.equal(create.statusCode, 201);
    const key = create.json() as { id: string; secret: string };
    const secretPart = secretPartOf(key.secret);
    assert.equal(secretPart.length, 32);
    assert.ok(create.body.includes(key.secret));

    const responses: [string, LightMyRequestResponse][] = [
      ['list', await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/api-keys' })],
      ['list all', await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/api-keys?all=true' })],
      ['get', await getKey(ta, key.id)],
      ['whoami', await call(ta.app, key.secret, { method: 'GET', url: '/api/auth/whoami' })],
      ['audit log', await call(ta.app, key.secret, { method: 'GET', url: '/api/audit-log' })],
      ['revoke', await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` })],
      ['get revoked', await getKey(ta, key.id)],
    ];
    for (const [what, res] of responses) {
      assert.equal(res.statusCode, 200, `${what}: ${res.body}`);
      assert.ok(res.body.includes(key.id), `${what} is about the key`);
      assert.ok(!res.body.includes(key.secret), `${what} leaks the key`);
      assert.ok(!res.body.includes(secretPart), `${what} leaks the secret part`);
    }

    // Logs: with the key in the Authorization header, and in the URL in several spellings.
    const key2 = await newApiKey(ta, ['roles:view']);
    const secret2 = secretPartOf(key2.secret);
    assert.equal((await call(ta.app, key2.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    expectProblem(
      await call(ta.app, key2.secret, { method: 'POST', url: '/api/roles', payload: { name: 'n', permissions: [] } }),
      403,
      'insufficient_scope',
    );
    for (const url of [
      `/api/auth/whoami?api_key=${key2.secret}`,
      `/api/roles?api_key=${key2.secret}`,
      `/api/auth/whoami?authorization=Bearer%20${key2.secret}`,
      `/api/auth/whoami?authorization=Bearer+${key2.secret}`,
      `/api/auth/whoami?x=${encodeURIComponent(`"${key2.secret}"`)}`,
    ]) {
      const res = await ta.app.inject({ method: 'GET', url });
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${url}: ${res.statusCode}`);
    }
    assert.ok(ta.logs.length > 0, 'the app logs requests');
    assert.ok(
      ta.logs.some((l) => l.includes('api_key=')),
      'query-string requests were logged',
    );
    for (const line of ta.logs) {
      for (const [token, part] of [
        [key.secret, secretPart],
        [key2.secret, secret2],
        [ta.ownerToken, ta.ownerToken.slice(4 + 12, 4 + 12 + 32)],
      ]) {
        assert.ok(!line.includes(token), `a log line holds a token: ${line}`);
        assert.ok(!line.includes(part), `a log line holds a secret part: ${line}`);
      }
    }

    // Storage: a SHA-256 of the secret part; no column holds the secret.
    const row = await ta.db.selectFrom('api_keys').selectAll().where('id', '=', key2.id).executeTakeFirstOrThrow();
    for (const [column, value] of Object.entries(row)) {
      assert.ok(!String(value).includes(secret2), `api_keys.${column} holds the secret`);
    }
    assert.match(row.secret_hash, /^[0-9a-f]{64}$/);
    assert.equal(row.secret_hash, hashSecret(secret2));
  });

  test("listing: your own keys; admins see everyone's with all=true; others' keys are 404", async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    const ownerKey = await newApiKey(ta, ['roles:view'], { name: 'owner key' });
    const opKey = await newApiKey(ta, ['roles:view'], { token: op.token, name: 'op key' });

    const mine = await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys' });
    assert.equal(mine.statusCode, 200);
    assert.deepEqual(
      mine.json().data.map((k: { id: string }) => k.id),
      [opKey.id],
    );
    assert.equal(mine.json().next_cursor, null);
    assert.equal(mine.json().data[0].operator_id, op.id);
    const ownerMine = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/api-keys' });
    assert.deepEqual(
      ownerMine.json().data.map((k: { id: string }) => k.id),
      [ownerKey.id],
      'admins too see only their own by default',
    );

    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys?all=true' }), 403, 'forbidden');
    const all = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/api-keys?all=true' });
    assert.equal(all.statusCode, 200);
    assert.deepEqual(
      all
        .json()
        .data.map((k: { id: string }) => k.id)
        .sort(),
      [ownerKey.id, opKey.id].sort(),
    );

    // Another operator's key is invisible to a non-admin: 404 to read and to revoke.
    expectProblem(await getKey(ta, ownerKey.id, op.token), 404, 'not_found');
    expectProblem(
      await call(ta.app, op.token, { method: 'POST', url: `/api/api-keys/${ownerKey.id}/revoke` }),
      404,
      'not_found',
    );
    expectProblem(await getKey(ta, 'no-such-key', op.token), 404, 'not_found');
    assert.equal((await getKey(ta, ownerKey.id)).json().status, 'active');
    // An admin may read and revoke anyone's.
    assert.equal((await getKey(ta, opKey.id)).statusCode, 200);
    const rev = await call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/api-keys/${opKey.id}/revoke` });
    assert.equal(rev.statusCode, 200);
    assert.equal(rev.json().status, 'revoked');
    expectUnauthorized(await call(ta.app, opKey.secret, { method: 'GET', url: '/api/roles' }));
  });

  test('listing: the status filter and cursor paging return every key exactly once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    await newApiKey(ta, ['roles:view']); // the owner's, never in op's pages
    const ids: string[] = [];
    for (let i = 0; i < 7; i++)
      ids.push((await newApiKey(ta, ['roles:view'], { token: op.token, name: `key ${i}` })).id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/api/api-keys?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await call(ta.app, op.token, { method: 'GET', url });
      assert.equal(res.statusCode, 200, res.body);
      const page = res.json() as { data: { id: string; secret?: string }[]; next_cursor: string | null };
      assert.ok(page.data.length <= 3);
      for (const k of page.data) assert.equal(k.secret, undefined);
      seen.push(...page.data.map((k) => k.id));
      cursor = page.next_cursor;
      pages++;
      assert.ok(pages <= 5, 'paging terminates');
    } while (cursor);
    assert.equal(pages, 3);
    assert.equal(seen.length, 7);
    assert.deepEqual([...seen].sort(), [...ids].sort(), 'every key exactly once');
    expectProblem(
      await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys?cursor=garbage!' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys?limit=0' }),
      400,
      'validation_failed',
    );
    expectProblem(
      await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys?limit=501' }),
      400,
      'validation_failed',
    );

    // Status: revoke one, expire one.
    await call(ta.app, op.token, { method: 'POST', url: `/api/api-keys/${ids[0]}/revoke` });
    await ta.db
      .updateTable('api_keys')
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where('id', '=', ids[1])
      .execute();
    const byStatus = async (status: string) => {
      const res = await call(ta.app, op.token, { method: 'GET', url: `/api/api-keys?status=${status}` });
      assert.equal(res.statusCode, 200, res.body);
      const data = res.json().data as { id: string; status: string }[];
      for (const k of data) assert.equal(k.status, status);
      return data.map((k) => k.id).sort();
    };
    assert.deepEqual(await byStatus('revoked'), [ids[0]]);
    assert.deepEqual(await byStatus('expired'), [ids[1]]);
    assert.deepEqual(await byStatus('active'), ids.slice(2).sort());
    expectProblem(
      await call(ta.app, op.token, { method: 'GET', url: '/api/api-keys?status=bogus' }),
      400,
      'validation_failed',
    );
  });
});
