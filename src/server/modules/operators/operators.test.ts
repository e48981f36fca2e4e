import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ALL_PERMISSIONS } from '../../auth/permissions.js';
import { totpAt } from '../../auth/totp.js';
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

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface OperatorBody {
  id: string;
  email: string;
  name: string;
  role_id: string;
  role_name: string;
  status: 'active' | 'disabled';
  timezone: string;
  admin: boolean;
  created_at: string;
  updated_at: string;
}

const adminRoleId = async (ta: TestApp) =>
  (await ta.db.selectFrom('roles').select('id').where('builtin', '=', 1).executeTakeFirstOrThrow()).id;

async function makeRole(ta: TestApp, name: string, permissions: string[]): Promise<string> {
  const res = await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/roles', payload: { name, permissions } });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().id;
}

/** Creates an operator as `token`, confirmed with `password` (the caller's own) unless the payload says otherwise. */
const createOp = (ta: TestApp, payload: Record<string, unknown>, token = ta.ownerToken, password = OWNER.password) =>
  call(ta.app, token, { method: 'POST', url: '/api/operators', payload: { current_password: password, ...payload } });

const patchOp = (ta: TestApp, id: string, payload: Record<string, unknown>, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'PATCH', url: `/api/operators/${id}`, payload });

const getOp = async (ta: TestApp, id: string) =>
  (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${id}` })).json() as OperatorBody;

function fieldsOf(res: LightMyRequestResponse): string[] {
  const p = expectProblem(res, 400, 'validation_failed');
  assert.ok(Array.isArray(p.errors) && p.errors.length > 0);
  return p.errors!.map((e) => e.field);
}

/** Nothing that looks like a password or its hash, and not the given secret, in a response. */
function assertNoPassword(res: LightMyRequestResponse, password: string) {
  assert.ok(!res.body.includes(password), `the password leaked: ${res.body}`);
  assert.ok(!/password/i.test(res.body), `a password field leaked: ${res.body}`);
  assert.ok(!res.body.includes('$argon2'), `a hash leaked: ${res.body}`);
}

async function loginStatus(ta: TestApp, email: string, password: string): Promise<number> {
  const res = await ta.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
  return res.statusCode;
}

async function walk(ta: TestApp, url: string): Promise<{ pages: number[]; ids: string[] }> {
  const pages: number[] = [];
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const res = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: cursor ? `${url}${sep}cursor=${encodeURIComponent(cursor)}` : url,
    });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    pages.push(page.data.length);
    ids.push(...page.data.map((o: OperatorBody) => o.id));
    cursor = page.next_cursor;
    assert.ok(pages.length < 100);
  } while (cursor);
  return { pages, ids };
}

const whoamiStatus = async (ta: TestApp, token: string) =>
  (await call(ta.app, token, { method: 'GET', url: '/api/auth/whoami' })).statusCode;

/** Turns two-factor sign-in on for an operator through their own profile; returns the seed. */
async function enrolTwoFactor(ta: TestApp, token: string): Promise<string> {
  const started = await call(ta.app, token, { method: 'POST', url: '/api/profile/2fa/enrol' });
  assert.equal(started.statusCode, 200, started.body);
  const { secret } = started.json();
  const confirmed = await call(ta.app, token, {
    method: 'POST',
    url: '/api/profile/2fa/confirm',
    payload: { code: totpAt(secret, Date.now()) },
  });
  assert.equal(confirmed.statusCode, 200, confirmed.body);
  return secret;
}

/** What a takeover would change: sign-in, email, second factor and recovery codes. */
const secretsOf = async (ta: TestApp, id: string) => ({
  ...(await ta.db
    .selectFrom('operators')
    .select(['email', 'password_hash', 'totp_secret', 'updated_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow()),
  recovery_codes: (
    await ta.db
      .selectFrom('recovery_codes')
      .select('code_hash')
      .where('operator_id', '=', id)
      .orderBy('code_hash')
      .execute()
  ).map((r) => r.code_hash),
});

forEachDatabase('operators', (engine) => {
  test('create: 201 with the operator, email lowercased, password never returned', async (t) => {
    const ta = await buildTestApp(t, engine);
    const roleId = await makeRole(ta, 'Support', ['leads:view']);
    const password = 'a-very-secret-pass';
    const res = await createOp(ta, {
      email: 'Jane.Doe@Example.TEST',
      name: ' Jane Doe ',
      password,
      role_id: roleId,
      timezone: 'Europe/Berlin',
    });
    assert.equal(res.statusCode, 201, res.body);
    assertNoPassword(res, password);
    const op = res.json() as OperatorBody;
    assert.deepEqual(Object.keys(op).sort(), [
      'admin',
      'created_at',
      'email',
      'id',
      'name',
      'role_id',
      'role_name',
      'status',
      'timezone',
      'two_factor',
      'updated_at',
    ]);
    assert.equal(op.admin, false);
    assert.equal(op.email, 'jane.doe@example.test');
    assert.equal(op.name, 'Jane Doe');
    assert.equal(op.role_id, roleId);
    assert.equal(op.role_name, 'Support');
    assert.equal(op.status, 'active');
    assert.equal(op.timezone, 'Europe/Berlin');
    assert.match(op.created_at, ISO);

    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.equal(row.email, 'jane.doe@example.test');
    assert.match(row.password_hash, /^\$argon2id\$/);
    assert.ok(!row.password_hash.includes(password));

    // Nor in any later answer about the operator.
    const got = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${op.id}` });
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json(), op);
    assertNoPassword(got, password);
    const list = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/operators' });
    assertNoPassword(list, password);
    const patched = await patchOp(ta, op.id, { name: 'Jane D.' });
    assert.equal(patched.statusCode, 200);
    assertNoPassword(patched, password);
    const reset = await patchOp(ta, op.id, { password: 'another-secret-1', current_password: OWNER.password });
    assertNoPassword(reset, 'another-secret-1');

    // The new operator logs in whatever case the email is typed in.
    const session = await ta.app.inject({
      method: 'POST',
      url: '/api/auth/login',
      payload: { email: 'JANE.doe@example.test', password: 'another-secret-1' },
    });
    assert.equal(session.statusCode, 200, session.body);
    assertNoPassword(session, 'another-secret-1');
    assert.equal(session.json().operator.id, op.id);

    // Defaults: time zone UTC, status active.
    const bare = await createOp(ta, {
      email: 'bare@example.test',
      name: 'Bare',
      password: 'long-enough-1',
      role_id: roleId,
    });
    assert.equal(bare.statusCode, 201);
    assert.equal(bare.json().timezone, 'UTC');
    assert.equal(bare.json().status, 'active');
  });

  test('create: duplicate email 409, in any letter case', async (t) => {
    const ta = await buildTestApp(t, engine);
    const roleId = await makeRole(ta, 'R', []);
    assert.equal(
      (await createOp(ta, { email: 'dup@example.test', name: 'One', password: 'long-enough-1', role_id: roleId }))
        .statusCode,
      201,
    );
    expectProblem(
      await createOp(ta, { email: 'dup@example.test', name: 'Two', password: 'long-enough-2', role_id: roleId }),
      409,
      'conflict',
    );
    expectProblem(
      await createOp(ta, { email: 'DUP@Example.Test', name: 'Two', password: 'long-enough-2', role_id: roleId }),
      409,
      'conflict',
    );
    expectProblem(
      await createOp(ta, {
        email: OWNER.email.toUpperCase(),
        name: 'Three',
        password: 'long-enough-2',
        role_id: roleId,
      }),
      409,
      'conflict',
    );
    const rows = await ta.db.selectFrom('operators').select('name').where('email', '=', 'dup@example.test').execute();
    assert.deepEqual(
      rows.map((r) => r.name),
      ['One'],
    );
    // Changing an email to one in use is refused too.
    const other = (
      await createOp(ta, { email: 'other@example.test', name: 'Other', password: 'long-enough-3', role_id: roleId })
    ).json();
    expectProblem(
      await patchOp(ta, other.id, { email: 'Dup@example.test', current_password: OWNER.password }),
      409,
      'conflict',
    );
  });

  test('create: 400 naming each bad field, and nothing stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    const roleId = await makeRole(ta, 'R', []);
    const count = async () => (await ta.db.selectFrom('operators').select('id').execute()).length;
    const before = await count();
    const ok = { email: 'x@example.test', name: 'X', password: 'long-enough-1', role_id: roleId };

    assert.deepEqual(fieldsOf(await createOp(ta, { ...ok, role_id: 'no-such-role' })), ['role_id']);
    assert.deepEqual(fieldsOf(await createOp(ta, { ...ok, timezone: 'Mars/Olympus_Mons' })), ['timezone']);
    assert.deepEqual(fieldsOf(await createOp(ta, { ...ok, email: 'not-an-email' })), ['email']);
    const short = await createOp(ta, { ...ok, password: 'short' });
    assert.deepEqual(
      short.json().errors,
      [{ field: 'password', message: 'must be at least 10 characters long' }],
      'a limit said plainly',
    );
    const noName = await createOp(ta, { ...ok, name: '' });
    assert.deepEqual(noName.json().errors, [{ field: 'name', message: 'must not be empty' }]);
    assert.deepEqual((await createOp(ta, { ...ok, name: '   ' })).json().errors, [
      { field: 'name', message: 'must not be blank' },
    ]);
    assert.deepEqual(fieldsOf(await createOp(ta, { ...ok, status: 'sleeping' })), ['status']);
    assert.deepEqual(fieldsOf(await createOp(ta, { ...ok, password_hash: 'x' })), ['password_hash']);
    const { password: _p, ...noPassword } = ok;
    assert.deepEqual(fieldsOf(await createOp(ta, noPassword)), ['password']);
    assert.equal(await count(), before);
  });

  test('list filters by status, role_id and q, and pages exactly once', async (t) => {
    const ta = await buildTestApp(t, engine);
    const sales = await makeRole(ta, 'Sales', ['leads:view']);
    const ops = await makeRole(ta, 'Ops', ['flows:view']);
    const mk = async (email: string, name: string, role_id: string, status = 'active') => {
      const res = await createOp(ta, { email, name, password: 'long-enough-1', role_id, status });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const alice = await mk('alice@example.test', 'Alice Smith', sales);
    const bob = await mk('bob@example.test', 'Bob Jones', sales, 'disabled');
    const carol = await mk('carol_x@example.test', 'Carol', ops);
    const dave = await mk('dave@corp.test', 'Dave Smithers', ops, 'disabled');
    const ids = (url: string) =>
      call(ta.app, ta.ownerToken, { method: 'GET', url }).then((r) => {
        assert.equal(r.statusCode, 200, r.body);
        return (r.json().data as OperatorBody[]).map((o) => o.id).sort();
      });

    assert.deepEqual(await ids('/api/operators?status=disabled'), [bob, dave].sort());
    assert.deepEqual(await ids('/api/operators?status=active'), [ta.ownerId, alice, carol].sort());
    assert.deepEqual(await ids(`/api/operators?role_id=${sales}`), [alice, bob].sort());
    assert.deepEqual(await ids(`/api/operators?role_id=${ops}&status=disabled`), [dave]);
    assert.deepEqual(await ids('/api/operators?role_id=no-such-role'), []);
    // q matches part of the name or the email, in any case.
    assert.deepEqual(await ids('/api/operators?q=smith'), [alice, dave].sort());
    assert.deepEqual(await ids('/api/operators?q=SMITH'), [alice, dave].sort());
    assert.deepEqual(await ids('/api/operators?q=corp.test'), [dave]);
    assert.deepEqual(await ids(`/api/operators?q=smith&role_id=${sales}`), [alice]);
    // LIKE wildcards in q are taken literally, on both engines.
    assert.deepEqual(await ids('/api/operators?q=_'), [carol]);
    assert.deepEqual(await ids('/api/operators?q=%25'), []);
    fieldsOf(await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/operators?status=sleeping' }));

    // Paging: 5 operators in pages of 2, each exactly once; filters hold across pages.
    const all = await walk(ta, '/api/operators?limit=2');
    assert.deepEqual(all.pages, [2, 2, 1]);
    assert.equal(new Set(all.ids).size, all.ids.length);
    assert.deepEqual([...all.ids].sort(), [ta.ownerId, alice, bob, carol, dave].sort());
    const active = await walk(ta, '/api/operators?limit=1&status=active');
    assert.deepEqual(active.pages, [1, 1, 1]);
    assert.deepEqual([...active.ids].sort(), [ta.ownerId, alice, carol].sort());
    for (const limit of ['0', '501'])
      fieldsOf(await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators?limit=${limit}` }));
    assert.deepEqual(fieldsOf(await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/operators?cursor=%%%' })), [
      'cursor',
    ]);
  });

  test('patch changes fields; bad timezone or role is 400; missing id is 404', async (t) => {
    const ta = await buildTestApp(t, engine);
    const r1 = await makeRole(ta, 'R1', ['leads:view']);
    const r2 = await makeRole(ta, 'R2', ['flows:view']);
    const op = (
      await createOp(ta, { email: 'p@example.test', name: 'P', password: 'long-enough-1', role_id: r1 })
    ).json() as OperatorBody;
    const res = await patchOp(ta, op.id, {
      name: 'Pat',
      email: 'PAT@example.test',
      timezone: 'America/New_York',
      role_id: r2,
      current_password: OWNER.password,
    });
    assert.equal(res.statusCode, 200, res.body);
    const after = res.json() as OperatorBody;
    assert.equal(after.name, 'Pat');
    assert.equal(after.email, 'pat@example.test');
    assert.equal(after.timezone, 'America/New_York');
    assert.equal(after.role_id, r2);
    assert.equal(after.role_name, 'R2');
    assert.equal(after.created_at, op.created_at);
    assert.deepEqual(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${op.id}` })).json(),
      after,
    );
    // A patch that leaves a field out leaves it alone (the time zone is not reset to a default).
    const renamed = await patchOp(ta, op.id, { name: 'Patricia' });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().timezone, 'America/New_York');
    assert.equal(renamed.json().role_id, r2);
    assert.equal(renamed.json().email, 'pat@example.test');

    assert.deepEqual(fieldsOf(await patchOp(ta, op.id, { timezone: 'Nowhere/Land' })), ['timezone']);
    assert.deepEqual(fieldsOf(await patchOp(ta, op.id, { role_id: 'no-such-role' })), ['role_id']);
    assert.deepEqual(fieldsOf(await patchOp(ta, op.id, { password: 'short' })), ['password']);
    expectProblem(await patchOp(ta, op.id, {}), 400, 'validation_failed');
    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', op.id).executeTakeFirstOrThrow();
    assert.equal(row.timezone, 'America/New_York');
    assert.equal(row.role_id, r2);

    const missing = '00000000-0000-7000-8000-000000000000';
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${missing}` }),
      404,
      'not_found',
    );
    expectProblem(await patchOp(ta, missing, { name: 'x' }), 404, 'not_found');
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${missing}` }),
      404,
      'not_found',
    );
  });

  test('delete: 204, then 404, and their sessions and keys stop working', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    const key = await newApiKey(ta, ['roles:view'], { token: op.token });
    assert.equal(await whoamiStatus(ta, op.token), 200);
    assert.equal(await whoamiStatus(ta, key.secret), 200);

    const del = await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${op.id}` });
    assert.equal(del.statusCode, 204);
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/operators/${op.id}` }),
      404,
      'not_found',
    );
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${op.id}` }),
      404,
      'not_found',
    );
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' }), 401, 'unauthorized');
    assert.equal(await loginStatus(ta, op.email, op.password), 401);
    assert.equal(
      (await ta.db.selectFrom('sessions').select('id').where('operator_id', '=', op.id).execute()).length,
      0,
    );
    assert.equal(
      (await ta.db.selectFrom('api_keys').select('id').where('operator_id', '=', op.id).execute()).length,
      0,
    );
    // Their role is free to delete now.
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${op.roleId}` })).statusCode,
      204,
    );
  });

  test('disabling ends sessions and stops keys; re-enabling allows login but revives no session', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    const key = await newApiKey(ta, ['roles:view'], { token: op.token });

    const off = await patchOp(ta, op.id, { status: 'disabled' });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().status, 'disabled');
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: '/api/roles' }), 401, 'unauthorized');
    assert.equal(
      (await ta.db.selectFrom('sessions').select('id').where('operator_id', '=', op.id).execute()).length,
      0,
    );
    assert.equal(await loginStatus(ta, op.email, op.password), 401, 'a disabled operator cannot log in');

    const on = await patchOp(ta, op.id, { status: 'active' });
    assert.equal(on.statusCode, 200);
    assert.equal(on.json().status, 'active');
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    const fresh = await login(ta.app, op.email, op.password);
    assert.equal(await whoamiStatus(ta, fresh), 200);
  });

  test('nobody changes their own role or status, or deletes themselves (409)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const other = await makeRole(ta, 'Other', []);
    expectProblem(await patchOp(ta, ta.ownerId, { role_id: other }), 409, 'conflict');
    expectProblem(await patchOp(ta, ta.ownerId, { status: 'disabled' }), 409, 'conflict');
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${ta.ownerId}` }),
      409,
      'conflict',
    );
    // A non-admin operator manager is held to the same rule.
    const mgr = await newOperator(ta, ['operators:view', 'operators:edit']);
    expectProblem(await patchOp(ta, mgr.id, { status: 'disabled' }, mgr.token), 409, 'conflict');
    expectProblem(
      await call(ta.app, mgr.token, { method: 'DELETE', url: `/api/operators/${mgr.id}` }),
      409,
      'conflict',
    );
    // Their own name is fine.
    assert.equal((await patchOp(ta, mgr.id, { name: 'Manager' }, mgr.token)).statusCode, 200);

    const owner = await ta.db
      .selectFrom('operators')
      .selectAll()
      .where('id', '=', ta.ownerId)
      .executeTakeFirstOrThrow();
    assert.equal(owner.status, 'active');
    assert.equal(owner.role_id, await adminRoleId(ta));
    assert.equal(await whoamiStatus(ta, ta.ownerToken), 200);
    assert.equal(await whoamiStatus(ta, mgr.token), 200);
  });

  test('admins manage admins and an active admin always remains: a disabled admin does not count, nobody changes their own role or status', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRoleId(ta);
    const plain = await makeRole(ta, 'Plain', ['leads:view']);
    // Someone holding every permission through a custom role is no admin: the owner is out of reach.
    const su = await newOperator(ta, [...ALL_PERMISSIONS]);
    expectProblem(await patchOp(ta, ta.ownerId, { status: 'disabled' }, su.token), 403, 'forbidden');

    // The owner is the last active admin; a disabled admin does not count as a second one.
    const dormant = (
      await createOp(ta, {
        email: 'dormant@example.test',
        name: 'Dormant',
        password: 'long-enough-1',
        role_id: admin,
        status: 'disabled',
      })
    ).json();
    expectProblem(await patchOp(ta, ta.ownerId, { status: 'disabled' }), 409, 'conflict');
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/operators/${ta.ownerId}` }),
      409,
      'conflict',
    );

    // A second active admin demotes, disables and deletes the owner.
    const second = (
      await createOp(ta, { email: 'second@example.test', name: 'Second', password: 'long-enough-2', role_id: admin })
    ).json();
    const secondToken = await login(ta.app, 'second@example.test', 'long-enough-2');
    const demoted = await patchOp(ta, ta.ownerId, { role_id: plain }, secondToken);
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.equal(demoted.json().admin, false);
    // Demoted, the owner now manages no admin; `second` is the last active admin and cannot change itself.
    expectProblem(await patchOp(ta, second.id, { status: 'disabled' }, ta.ownerToken), 403, 'forbidden');
    expectProblem(await patchOp(ta, second.id, { status: 'disabled' }, secondToken), 409, 'conflict');
    assert.equal((await patchOp(ta, ta.ownerId, { role_id: admin }, secondToken)).statusCode, 200);
    assert.equal((await patchOp(ta, ta.ownerId, { status: 'disabled' }, secondToken)).statusCode, 200);
    expectProblem(await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    assert.equal(
      (await call(ta.app, secondToken, { method: 'DELETE', url: `/api/operators/${ta.ownerId}` })).statusCode,
      204,
    );
    // A disabled admin can go at any time.
    assert.equal(
      (await call(ta.app, secondToken, { method: 'DELETE', url: `/api/operators/${dormant.id}` })).statusCode,
      204,
    );
    const admins = await ta.db
      .selectFrom('operators')
      .select('id')
      .where('role_id', '=', admin)
      .where('status', '=', 'active')
      .execute();
    assert.deepEqual(
      admins.map((a) => a.id),
      [second.id],
    );
  });

  test('two admins disabling each other at the same moment never leave none', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRoleId(ta);
    for (let round = 0; round < 5; round++) {
      const a = (
        await createOp(ta, {
          email: `race-a${round}@example.test`,
          name: 'A',
          password: 'long-enough-a',
          role_id: admin,
        })
      ).json();
      const aToken = await login(ta.app, a.email, 'long-enough-a');
      // Leave exactly two active admins: the owner and `a`.
      const others = await ta.db
        .selectFrom('operators')
        .select('id')
        .where('role_id', '=', admin)
        .where('status', '=', 'active')
        .execute();
      assert.deepEqual(new Set(others.map((o) => o.id)), new Set([ta.ownerId, a.id]));
      const [r1, r2] = await Promise.all([
        patchOp(ta, a.id, { status: 'disabled' }, ta.ownerToken),
        patchOp(ta, ta.ownerId, { status: 'disabled' }, aToken),
      ]);
      const codes = [r1.statusCode, r2.statusCode].sort();
      // One wins; the other is refused as the last admin (or, having been disabled itself, 401).
      assert.ok(
        codes[0] === 200 && (codes[1] === 409 || codes[1] === 401),
        `round ${round}: ${r1.statusCode} ${r1.body} / ${r2.statusCode} ${r2.body}`,
      );
      const active = await ta.db
        .selectFrom('operators')
        .select('id')
        .where('role_id', '=', admin)
        .where('status', '=', 'active')
        .execute();
      assert.equal(active.length, 1, `round ${round}: exactly one active admin remains`);
      if (active[0].id !== ta.ownerId) {
        // Put the owner back for the next round.
        await ta.db.updateTable('operators').set({ status: 'active' }).where('id', '=', ta.ownerId).execute();
        ta.ownerToken = await login(ta.app, OWNER.email, OWNER.password);
      }
      await ta.db.deleteFrom('operators').where('id', '=', a.id).execute();
    }
  });

  test('an API key cannot mint a role or an operator stronger than its own scopes', async (t) => {
    const ta = await buildTestApp(t, engine);
    const key = await newApiKey(ta, ['roles:edit', 'operators:edit']);
    const role = await call(ta.app, key.secret, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'wide', permissions: ['leads:edit'] },
    });
    expectProblem(role, 403, 'forbidden');
    const ok = await call(ta.app, key.secret, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'narrow', permissions: ['roles:edit'] },
    });
    assert.equal(ok.statusCode, 201, ok.body);
    // No operator at all can be made through a key (a new password is a credential for a person).
    for (const role_id of [await adminRoleId(ta), ok.json().id]) {
      const op = await call(ta.app, key.secret, {
        method: 'POST',
        url: '/api/operators',
        payload: {
          email: 'minted@example.test',
          name: 'Minted',
          password: 'long-enough-9',
          role_id,
          current_password: OWNER.password,
        },
      });
      expectProblem(op, 403, 'session_required');
    }
    assert.equal(
      await ta.db.selectFrom('operators').select('id').where('email', '=', 'minted@example.test').executeTakeFirst(),
      undefined,
    );
  });

  test('a non-admin with operators:edit cannot make or manage admins (403 forbidden)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRoleId(ta);
    const mgr = await newOperator(ta, ['operators:view', 'operators:edit', 'leads:view']);
    const count = async () => (await ta.db.selectFrom('operators').select('id').execute()).length;
    const before = await count();

    expectProblem(
      await createOp(
        ta,
        { email: 'evil@example.test', name: 'Evil', password: 'long-enough-1', role_id: admin },
        mgr.token,
        mgr.password,
      ),
      403,
      'forbidden',
    );
    // Nor any role holding more than they do.
    const bigger = await makeRole(ta, 'Bigger', ['leads:view', 'leads:edit']);
    expectProblem(
      await createOp(
        ta,
        { email: 'evil@example.test', name: 'Evil', password: 'long-enough-1', role_id: bigger },
        mgr.token,
        mgr.password,
      ),
      403,
      'forbidden',
    );
    assert.equal(await count(), before);

    expectProblem(await patchOp(ta, ta.ownerId, { name: 'Hacked' }, mgr.token), 403, 'forbidden');
    expectProblem(await patchOp(ta, ta.ownerId, { status: 'disabled' }, mgr.token), 403, 'forbidden');
    expectProblem(await patchOp(ta, ta.ownerId, { password: 'i-own-you-now' }, mgr.token), 403, 'forbidden');
    expectProblem(
      await call(ta.app, mgr.token, { method: 'DELETE', url: `/api/operators/${ta.ownerId}` }),
      403,
      'forbidden',
    );
    // Nor promote someone (themselves included) to admin.
    const small = await makeRole(ta, 'Small', ['leads:view']);
    const peon = await createOp(
      ta,
      { email: 'peon@example.test', name: 'Peon', password: 'long-enough-1', role_id: small },
      mgr.token,
      mgr.password,
    );
    assert.equal(peon.statusCode, 201, peon.body);
    expectProblem(await patchOp(ta, peon.json().id, { role_id: admin }, mgr.token), 403, 'forbidden');
    expect403or409(await patchOp(ta, mgr.id, { role_id: admin }, mgr.token));

    const owner = await ta.db
      .selectFrom('operators')
      .selectAll()
      .where('id', '=', ta.ownerId)
      .executeTakeFirstOrThrow();
    assert.equal(owner.name, OWNER.name);
    assert.equal(owner.status, 'active');
    assert.equal(await whoamiStatus(ta, ta.ownerToken), 200);
    assert.equal(await loginStatus(ta, OWNER.email, 'i-own-you-now'), 401);
    assert.equal(
      (await ta.db.selectFrom('operators').select('role_id').where('id', '=', peon.json().id).executeTakeFirstOrThrow())
        .role_id,
      small,
    );
    assert.equal(
      (await ta.db.selectFrom('operators').select('role_id').where('id', '=', mgr.id).executeTakeFirstOrThrow())
        .role_id,
      mgr.roleId,
    );
  });

  test("a password reset by PATCH ends that operator's sessions; the new password works", async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view']);
    const second = await login(ta.app, op.email, op.password);
    const res = await patchOp(ta, op.id, { password: 'brand-new-password', current_password: OWNER.password });
    assert.equal(res.statusCode, 200);
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    expectProblem(await call(ta.app, second, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    assert.equal(await loginStatus(ta, op.email, op.password), 401);
    const fresh = await login(ta.app, op.email, 'brand-new-password');
    assert.equal(await whoamiStatus(ta, fresh), 200);
    // The admin who reset it keeps their own session.
    assert.equal(await whoamiStatus(ta, ta.ownerToken), 200);
  });

  test("an API key with operators:edit cannot set a password, change an email or turn off 2FA, its own operator's or anyone's (403 session_required)", async (t) => {
    const ta = await buildTestApp(t, engine);
    // Every scope the owner (admin) holds: operators:edit and enough to manage anyone.
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    const key = await newApiKey(ta, all);
    const op = await newOperator(ta, ['leads:view']);
    await enrolTwoFactor(ta, op.token);
    await enrolTwoFactor(ta, ta.ownerToken);
    const takeovers = [
      { password: 'taken-over-pw-1' },
      { email: 'attacker@example.test' },
      { two_factor: false },
      { two_factor: false, password: 'taken-over-pw-1' },
      // Knowing the password does not make a key a person.
      { password: 'taken-over-pw-1', current_password: OWNER.password },
      { email: 'attacker@example.test', name: 'Renamed', current_password: OWNER.password },
    ];
    for (const target of [ta.ownerId, op.id]) {
      const before = await secretsOf(ta, target);
      for (const payload of takeovers) {
        const res = await patchOp(ta, target, payload, key.secret);
        expectProblem(res, 403, 'session_required');
        assert.match(res.json().detail, /session/);
      }
      assert.deepEqual(await secretsOf(ta, target), before, 'nothing changed');
    }
    assert.equal(await loginStatus(ta, OWNER.email, 'taken-over-pw-1'), 401);
    assert.equal(await loginStatus(ta, op.email, 'taken-over-pw-1'), 401);
    assert.equal(await loginStatus(ta, 'attacker@example.test', OWNER.password), 401);
    // Their sessions live on.
    assert.equal(await whoamiStatus(ta, ta.ownerToken), 200);
    assert.equal(await whoamiStatus(ta, op.token), 200);
    // No operator.updated entry was written by the key.
    const entries = await ta.db
      .selectFrom('audit_log')
      .select('id')
      .where('action', '=', 'operator.updated')
      .where('via', '=', 'api_key')
      .execute();
    assert.equal(entries.length, 0);

    // What needs no person stays open to the key: name, time zone, status (and an unchanged email).
    const renamed = await patchOp(
      ta,
      op.id,
      { name: 'Renamed by key', timezone: 'Europe/Berlin', email: op.email },
      key.secret,
    );
    assert.equal(renamed.statusCode, 200, renamed.body);
    assert.equal(renamed.json().name, 'Renamed by key');
    // (An admin is another matter: only an admin's session changes one.)
    expectProblem(await patchOp(ta, ta.ownerId, { name: 'Owner by key' }, key.secret), 403, 'session_required');
    const off = await patchOp(ta, op.id, { status: 'disabled' }, key.secret);
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().status, 'disabled');
    assert.equal(await whoamiStatus(ta, op.token), 401);
  });

  test("a session sets a password, email or 2FA only with its own current_password; the target's sessions end", async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    await enrolTwoFactor(ta, op.token);
    const before = await secretsOf(ta, op.id);
    const payloads = [{ password: 'reset-by-admin-1' }, { email: 'moved@example.test' }, { two_factor: false }];

    // Missing: 400 naming current_password, and nothing changes.
    for (const payload of payloads) assert.deepEqual(fieldsOf(await patchOp(ta, op.id, payload)), ['current_password']);
    // Wrong: the same 400 (it is bad input), and the guess is counted against the acting operator.
    for (const payload of payloads) {
      const wrong = await patchOp(ta, op.id, { ...payload, current_password: 'not-my-password' });
      assert.deepEqual(fieldsOf(wrong), ['current_password']);
      assert.ok(!wrong.body.includes('not-my-password'));
    }
    assert.deepEqual(await secretsOf(ta, op.id), before);
    assert.equal(await loginStatus(ta, op.email, 'reset-by-admin-1'), 401);
    assert.equal(await whoamiStatus(ta, op.token), 200);
    const counted = await ta.db.selectFrom('login_failures').select('id').where('email', '=', OWNER.email).execute();
    assert.equal(counted.length, 3, "wrong guesses count toward the acting operator's login budget");
    const reauth = await ta.db
      .selectFrom('audit_log')
      .select(['actor_id', 'details'])
      .where('action', '=', 'auth.reauth_failed')
      .execute();
    assert.equal(reauth.length, 3);
    assert.ok(reauth.every((e) => e.actor_id === ta.ownerId && !e.details.includes('not-my-password')));

    // Right: turning 2FA off ends every session of theirs.
    const off = await patchOp(ta, op.id, { two_factor: false, current_password: OWNER.password });
    assert.equal(off.statusCode, 200, off.body);
    assert.equal(off.json().two_factor, false);
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    const token2 = await login(ta.app, op.email, op.password);

    // A new password ends them too; the old password stops working, the new one works.
    const reset = await patchOp(ta, op.id, { password: 'reset-by-admin-1', current_password: OWNER.password });
    assert.equal(reset.statusCode, 200, reset.body);
    expectProblem(await call(ta.app, token2, { method: 'GET', url: '/api/auth/whoami' }), 401, 'unauthorized');
    assert.equal(await loginStatus(ta, op.email, op.password), 401);
    assert.equal(await loginStatus(ta, op.email, 'reset-by-admin-1'), 200);

    const moved = await patchOp(ta, op.id, { email: 'Moved@example.test', current_password: OWNER.password });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal(moved.json().email, 'moved@example.test');
    // The acting session stays; a right password is no failure.
    assert.equal(await whoamiStatus(ta, ta.ownerToken), 200);
    assert.equal(
      (await ta.db.selectFrom('login_failures').select('id').where('email', '=', OWNER.email).execute()).length,
      3,
    );

    // Audited without any password: what changed, and how many sessions ended.
    const updates = await ta.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'operator.updated')
      .where('target_id', '=', op.id)
      .orderBy('id')
      .execute();
    const details = updates.map((u) => JSON.parse(u.details));
    const twoFactorOff = details.find((d) => d.two_factor_reset);
    const passwordReset = details.find((d) => d.password_reset);
    assert.ok(twoFactorOff && twoFactorOff.sessions_ended >= 1, JSON.stringify(details));
    assert.ok(passwordReset && passwordReset.sessions_ended >= 1, JSON.stringify(details));
    const all = JSON.stringify(await ta.db.selectFrom('audit_log').select('details').execute());
    for (const secret of [OWNER.password, 'reset-by-admin-1', 'not-my-password'])
      assert.ok(!all.includes(secret), `${secret} in the audit log`);
  });

  test('wrong current_password guesses are throttled like logins, also when racing', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        patchOp(ta, op.id, { password: 'reset-by-admin-1', current_password: `guess-${i}` }),
      ),
    );
    const judged = answers.filter((r) => r.statusCode === 400).length;
    const limited = answers.filter((r) => r.statusCode === 429).length;
    assert.ok(judged <= 5, `judged ${judged}, limited ${limited}`);
    assert.equal(judged + limited, 20);
    for (const r of answers.filter((a) => a.statusCode === 429)) {
      expectProblem(r, 429, 'rate_limited');
      assert.match(String(r.headers['retry-after']), /^\d+$/);
    }
    // Only judged guesses count; after the rest of the budget even the right password is not looked
    // at, and the owner's login is locked too.
    for (let i = judged; i < 5; i++)
      fieldsOf(await patchOp(ta, op.id, { password: 'reset-by-admin-1', current_password: `late-guess-${i}` }));
    expectProblem(
      await patchOp(ta, op.id, { password: 'reset-by-admin-1', current_password: OWNER.password }),
      429,
      'rate_limited',
    );
    assert.equal(await loginStatus(ta, OWNER.email, OWNER.password), 429);
    assert.equal(await loginStatus(ta, op.email, op.password), 200);
  });

  test('an API key with operators:edit cannot create an operator (403 session_required): a new password is a credential for a person', async (t) => {
    const ta = await buildTestApp(t, engine);
    const role = await makeRole(ta, 'Readers', ['leads:view']);
    const key = await newApiKey(ta, ['operators:view', 'operators:edit', 'roles:view', 'leads:view']);
    const res = await call(ta.app, key.secret, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'backdoor@example.test',
        name: 'Backdoor',
        password: 'chosen-by-the-key',
        role_id: role,
        current_password: OWNER.password,
      },
    });
    expectProblem(res, 403, 'session_required');
    assert.equal(
      await ta.db.selectFrom('operators').select('id').where('email', '=', 'backdoor@example.test').executeTakeFirst(),
      undefined,
    );
    assert.equal(await loginStatus(ta, 'backdoor@example.test', 'chosen-by-the-key'), 401);
  });

  test('a session creates an operator only with its own current_password; wrong guesses count toward the login limit', async (t) => {
    const ta = await buildTestApp(t, engine);
    const role = await makeRole(ta, 'Readers', ['leads:view']);
    const payload = { email: 'new@example.test', name: 'New', password: 'long-enough-1', role_id: role };
    assert.deepEqual(fieldsOf(await createOp(ta, { ...payload, current_password: undefined })), ['current_password']);
    assert.deepEqual(fieldsOf(await createOp(ta, payload, ta.ownerToken, 'not-my-password')), ['current_password']);
    assert.equal(
      await ta.db.selectFrom('operators').select('id').where('email', '=', payload.email).executeTakeFirst(),
      undefined,
    );
    for (let i = 0; i < 10; i++) await createOp(ta, payload, ta.ownerToken, `wrong-${i}`);
    expectProblem(await createOp(ta, payload), 429, 'rate_limited');
  });

  test('the admin role is its own thing: an operator holding every permission but admin cannot create, promote, change or delete an admin', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRoleId(ta);
    const almost = await newOperator(ta, [...ALL_PERMISSIONS]);
    const secondAdmin = (
      await createOp(ta, {
        email: 'second-admin@example.test',
        name: 'Second',
        password: 'second-admin-pw-1',
        role_id: admin,
      })
    ).json() as OperatorBody;
    const small = await makeRole(ta, 'Small', ['leads:view']);
    const peon = (
      await createOp(ta, { email: 'peon@example.test', name: 'Peon', password: 'long-enough-1', role_id: small })
    ).json() as OperatorBody;
    const snapshot = () => ta.db.selectFrom('operators').selectAll().orderBy('id').execute();
    const before = await snapshot();
    const as = (payload: Record<string, unknown>) => ({ current_password: almost.password, ...payload });

    expectProblem(
      await createOp(
        ta,
        { email: 'evil@example.test', name: 'Evil', password: 'long-enough-1', role_id: admin },
        almost.token,
        almost.password,
      ),
      403,
      'forbidden',
    );
    expectProblem(await patchOp(ta, peon.id, { role_id: admin }, almost.token), 403, 'forbidden');
    for (const target of [ta.ownerId, secondAdmin.id]) {
      for (const change of [
        { password: 'i-own-you-now' },
        { email: 'mine@example.test' },
        { two_factor: false },
        { status: 'disabled' },
        { role_id: small },
        { name: 'Hacked' },
      ]) {
        expectProblem(await patchOp(ta, target, as(change), almost.token), 403, 'forbidden');
      }
      expectProblem(
        await call(ta.app, almost.token, { method: 'DELETE', url: `/api/operators/${target}` }),
        403,
        'forbidden',
      );
    }
    assert.deepEqual(await snapshot(), before, 'nothing changed');
    assert.equal(await loginStatus(ta, 'second-admin@example.test', 'i-own-you-now'), 401);
    assert.equal(await loginStatus(ta, 'evil@example.test', 'long-enough-1'), 401);
    // The same operator still manages non-admins.
    assert.equal((await patchOp(ta, peon.id, { name: 'Still managed' }, almost.token)).statusCode, 200);
  });

  test("an admin's API key cannot change, demote, disable or delete an admin (403 session_required); an admin's session can", async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRoleId(ta);
    const small = await makeRole(ta, 'Small', ['leads:view']);
    const second = (
      await createOp(ta, {
        email: 'second-admin@example.test',
        name: 'Second',
        password: 'second-admin-pw-1',
        role_id: admin,
      })
    ).json() as OperatorBody;
    const peon = (
      await createOp(ta, { email: 'peon@example.test', name: 'Peon', password: 'long-enough-1', role_id: small })
    ).json() as OperatorBody;
    const key = await newApiKey(ta, ['operators:view', 'operators:edit', 'roles:view', 'leads:view']);
    for (const change of [{ status: 'disabled' }, { role_id: small }, { name: 'Renamed' }]) {
      expectProblem(await patchOp(ta, second.id, change, key.secret), 403, 'session_required');
    }
    expectProblem(await patchOp(ta, peon.id, { role_id: admin }, key.secret), 403, 'session_required');
    expectProblem(
      await call(ta.app, key.secret, { method: 'DELETE', url: `/api/operators/${second.id}` }),
      403,
      'session_required',
    );
    assert.equal((await getOp(ta, second.id)).status, 'active');
    assert.equal((await getOp(ta, peon.id)).role_id, small);
    // Non-admins stay open to the key; admins to the admin's session.
    assert.equal((await patchOp(ta, peon.id, { name: 'Renamed' }, key.secret)).statusCode, 200);
    assert.equal((await patchOp(ta, second.id, { status: 'disabled' })).statusCode, 200);
    assert.equal((await patchOp(ta, peon.id, { role_id: admin })).json().admin, true);
  });

  test('401 without credentials, 403 without operators:view / operators:edit', async (t) => {
    const ta = await buildTestApp(t, engine);
    const target = await newOperator(ta, ['leads:view']);
    const routes = [
      { method: 'GET', url: '/api/operators' },
      { method: 'GET', url: `/api/operators/${target.id}` },
      {
        method: 'POST',
        url: '/api/operators',
        payload: { email: 'n@example.test', name: 'N', password: 'long-enough-1', role_id: target.roleId },
      },
      { method: 'PATCH', url: `/api/operators/${target.id}`, payload: { name: 'N' } },
      { method: 'DELETE', url: `/api/operators/${target.id}` },
    ] as const;
    for (const r of routes) {
      const res = await call(ta.app, null, { ...r });
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }

    // target holds neither operators permission.
    for (const r of routes) expectProblem(await call(ta.app, target.token, { ...r }), 403, 'forbidden');

    const viewer = await newOperator(ta, ['operators:view', 'leads:view']);
    assert.equal((await call(ta.app, viewer.token, routes[0])).statusCode, 200);
    assert.equal((await call(ta.app, viewer.token, routes[1])).statusCode, 200);
    for (const r of routes.slice(2)) expectProblem(await call(ta.app, viewer.token, { ...r }), 403, 'forbidden');

    // A view-only key is refused every write; a key without the scope cannot even read.
    const viewKey = await newApiKey(ta, ['operators:view']);
    assert.equal((await call(ta.app, viewKey.secret, routes[0])).statusCode, 200);
    for (const r of routes.slice(2))
      expectProblem(
        await call(ta.app, viewKey.secret, { ...r }),
        403,
        r.method === 'POST' ? 'session_required' : 'insufficient_scope',
      );
    const noKey = await newApiKey(ta, ['leads:view']);
    expectProblem(await call(ta.app, noKey.secret, routes[0]), 403, 'insufficient_scope');

    const row = await ta.db.selectFrom('operators').selectAll().where('id', '=', target.id).executeTakeFirstOrThrow();
    assert.equal(row.name.startsWith('Operator'), true);
    assert.equal(
      (await ta.db.selectFrom('operators').select('id').where('email', '=', 'n@example.test').execute()).length,
      0,
    );
  });
});

/** Changing your own role to admin: refused either as "not yours to grant" or "not your own role". */
function expect403or409(res: LightMyRequestResponse) {
  assert.ok(res.statusCode === 403 || res.statusCode === 409, `${res.statusCode} ${res.body}`);
  expectProblem(res, res.statusCode, res.statusCode === 403 ? 'forbidden' : 'conflict');
}
