// The admin role is its own thing, not "every permission" (issue 24, findings 1 and 2): only an
// admin, from a dashboard session, creates, changes or deletes an admin, or grants or removes the
// admin role. Walked from the server's own route table: every write route under /api/operators
// and /api/roles is tried against the admins and the admin role by an operator whose role holds
// every permission, from its session and from a key holding every scope; none succeeds and
// nothing about the admins changes. A new write route there fails this test until its admin
// cases are written below.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import { buildTestApp, call, forEachDatabase, login, newApiKey, newOperator, OWNER, type TestApp } from './helpers.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface World {
  adminRole: string;
  smallRole: string;
  admins: string[];
  peon: string;
  password: string;
}

type Attempt = { url: string; payload?: Record<string, unknown> };

/** For each write route: the requests that would touch an admin or the admin role. */
const ATTEMPTS: Record<string, (w: World) => Attempt[]> = {
  'POST /api/operators': (w) => [
    {
      url: '/api/operators',
      payload: {
        email: 'evil@example.test',
        name: 'Evil',
        password: 'evil-password-1',
        role_id: w.adminRole,
        current_password: w.password,
      },
    },
  ],
  'PATCH /api/operators/:id': (w) => [
    { url: `/api/operators/${w.peon}`, payload: { role_id: w.adminRole } },
    ...w.admins.flatMap((id) =>
      [
        { password: 'i-own-you-now', current_password: w.password },
        { email: 'mine@example.test', current_password: w.password },
        { two_factor: false, current_password: w.password },
        { status: 'disabled' },
        { role_id: w.smallRole },
        { name: 'Hacked' },
        { timezone: 'Europe/Berlin' },
      ].map((payload) => ({ url: `/api/operators/${id}`, payload })),
    ),
  ],
  'DELETE /api/operators/:id': (w) => w.admins.map((id) => ({ url: `/api/operators/${id}` })),
  'POST /api/roles': () => [
    { url: '/api/roles', payload: { name: 'root', permissions: [...ALL_PERMISSIONS], builtin: true } },
  ],
  'PATCH /api/roles/:id': (w) => [
    { url: `/api/roles/${w.adminRole}`, payload: { permissions: ['leads:view'] } },
    { url: `/api/roles/${w.adminRole}`, payload: { name: 'not-admin' } },
  ],
  'DELETE /api/roles/:id': (w) => [{ url: `/api/roles/${w.adminRole}` }],
};

/** Everything that says who the admins are and how they sign in. */
async function adminState(ta: TestApp) {
  const roles = await ta.db.selectFrom('roles').selectAll().where('builtin', '=', 1).execute();
  const admins = await ta.db
    .selectFrom('operators')
    .innerJoin('roles', 'roles.id', 'operators.role_id')
    .select([
      'operators.id',
      'operators.email',
      'operators.name',
      'operators.status',
      'operators.timezone',
      'operators.password_hash',
      'operators.totp_secret',
      'operators.updated_at',
    ])
    .where('roles.builtin', '=', 1)
    .orderBy('operators.id')
    .execute();
  return { roles, admins };
}

forEachDatabase('the admin role', (engine) => {
  test('every operator and role route, as an operator holding every permission but admin (session and key): no admin is made, changed or deleted', async (t) => {
    const ta = await buildTestApp(t, engine);
    const adminRole = (await ta.db.selectFrom('roles').select('id').where('builtin', '=', 1).executeTakeFirstOrThrow())
      .id;
    const smallRole = (
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/roles',
        payload: { name: 'Small', permissions: ['leads:view'] },
      })
    ).json().id;
    const second = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'second-admin@example.test',
        name: 'Second',
        password: 'second-admin-pw-1',
        role_id: adminRole,
        current_password: OWNER.password,
      },
    });
    assert.equal(second.statusCode, 201, second.body);
    const secondToken = await login(ta.app, 'second-admin@example.test', 'second-admin-pw-1');
    const peon = await newOperator(ta, ['leads:view']);
    const almost = await newOperator(ta, [...ALL_PERMISSIONS]);
    const almostKey = await newApiKey(ta, [...ALL_PERMISSIONS], { token: almost.token });
    const world: World = {
      adminRole,
      smallRole,
      admins: [ta.ownerId, second.json().id],
      peon: peon.id,
      password: almost.password,
    };

    const routes = ta.app.routeTable.filter(
      (r) => WRITES.has(r.method) && /^\/api\/(operators|roles)(\/|$)/.test(r.url),
    );
    const uncovered = routes.map((r) => `${r.method} ${r.url}`).filter((k) => !ATTEMPTS[k]);
    assert.deepEqual(
      uncovered,
      [],
      'a new write route under /api/operators or /api/roles: add its admin cases to ATTEMPTS',
    );
    assert.ok(routes.length >= 6, `${routes.length} routes`);

    const before = await adminState(ta);
    const succeeded: string[] = [];
    let tried = 0;
    for (const r of routes) {
      for (const a of ATTEMPTS[`${r.method} ${r.url}`](world)) {
        for (const [who, token] of [
          ['session', almost.token],
          ['key', almostKey.secret],
        ] as const) {
          const res = await call(ta.app, token, {
            method: r.method as 'POST',
            url: a.url,
            ...(a.payload ? { payload: a.payload } : {}),
          });
          tried++;
          if (res.statusCode < 400 || res.statusCode >= 500)
            succeeded.push(
              `${who} ${r.method} ${a.url} ${JSON.stringify(a.payload ?? {})}: ${res.statusCode} ${res.body.slice(0, 160)}`,
            );
        }
      }
    }
    assert.deepEqual(succeeded, []);
    assert.ok(tried > 40, `${tried} requests`);
    assert.deepEqual(await adminState(ta), before, 'the admins and the admin role are as they were');
    assert.equal(
      (await ta.db.selectFrom('operators').select('role_id').where('id', '=', peon.id).executeTakeFirstOrThrow())
        .role_id,
      peon.roleId,
    );
    for (const [email, password] of [
      ['evil@example.test', 'evil-password-1'],
      [OWNER.email, 'i-own-you-now'],
      ['mine@example.test', 'i-own-you-now'],
    ]) {
      const res = await ta.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email, password } });
      assert.equal(res.statusCode, 401, `${email} signs in: ${res.body}`);
    }
    // The admins' sessions live on, and an admin's own session still manages admins.
    for (const token of [ta.ownerToken, secondToken])
      assert.equal((await call(ta.app, token, { method: 'GET', url: '/api/auth/whoami' })).statusCode, 200);
    const promoted = await call(ta.app, secondToken, {
      method: 'PATCH',
      url: `/api/operators/${peon.id}`,
      payload: { role_id: adminRole },
    });
    assert.equal(promoted.statusCode, 200, promoted.body);
    assert.equal(promoted.json().admin, true);
  });
});
