import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newApiKey,
  newOperator,
} from '../../../../test/helpers.js';

// Modules that have both actions, and the ones that are read-only by design.
const VIEW_AND_EDIT = ['leads', 'flows', 'partners', 'campaigns', 'traffic_providers', 'operators', 'roles'];
const VIEW_ONLY = ['analytics', 'audit'];

forEachDatabase('permissions', (engine) => {
  test('GET /api/permissions lists the whole module:action vocabulary', async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' });
    assert.equal(res.statusCode, 200);
    const body = res.json() as {
      permissions: string[];
      modules: {
        module: string;
        label: string;
        actions: { action: string; permission: string; description: string }[];
      }[];
    };
    const perms = new Set(body.permissions);
    assert.equal(perms.size, body.permissions.length, 'no permission is listed twice');
    for (const p of body.permissions) assert.match(p, /^[a-z_]+:(view|edit|contacts)$/);
    // Unmasked contacts are a lead permission of their own.
    assert.ok(perms.has('leads:contacts'));
    assert.deepEqual(
      body.permissions.filter((p) => p.endsWith(':contacts')),
      ['leads:contacts'],
    );
    for (const m of VIEW_AND_EDIT) {
      assert.ok(perms.has(`${m}:view`), `${m}:view`);
      assert.ok(perms.has(`${m}:edit`), `${m}:edit`);
    }
    for (const m of VIEW_ONLY) {
      assert.ok(perms.has(`${m}:view`), `${m}:view`);
      assert.ok(!perms.has(`${m}:edit`), `${m} is read-only: no ${m}:edit`);
    }
    // The per-module breakdown (what the role editor draws) says the same as the flat list.
    const fromModules = body.modules.flatMap((m) => m.actions.map((a) => a.permission));
    assert.deepEqual([...fromModules].sort(), [...body.permissions].sort());
    for (const m of body.modules) {
      assert.ok(m.label.length > 0);
      for (const a of m.actions) {
        assert.equal(a.permission, `${m.module}:${a.action}`);
        assert.ok(a.description.length > 0);
      }
    }
  });

  test('the vocabulary is exactly what roles and key scopes accept', async (t) => {
    const ta = await buildTestApp(t, engine);
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    // The built-in admin role holds every listed permission.
    const roles = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles' })).json().data as {
      builtin: boolean;
      permissions: string[];
    }[];
    const admin = roles.find((r) => r.builtin)!;
    assert.deepEqual([...admin.permissions].sort(), [...all].sort());
    // A role may be given all of them, and nothing outside them.
    const made = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'everything', permissions: all },
    });
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual([...made.json().permissions].sort(), [...all].sort());
    const bad = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/roles',
      payload: { name: 'bad', permissions: ['leads:delete'] },
    });
    expectProblem(bad, 400, 'validation_failed');
    // A key may be scoped to any of them.
    const key = await newApiKey(ta, all);
    assert.deepEqual([...(key.scopes as string[])].sort(), [...all].sort());
  });

  test('needs a credential: 401 without one, or with a bad one', async (t) => {
    const ta = await buildTestApp(t, engine);
    const none = await call(ta.app, null, { method: 'GET', url: '/api/permissions' });
    expectProblem(none, 401, 'unauthorized');
    assert.match(String(none.headers['www-authenticate']), /^Bearer/);
    const garbage = await call(ta.app, 'lg_not-a-real-key', { method: 'GET', url: '/api/permissions' });
    expectProblem(garbage, 401, 'unauthorized');
    const basic = await ta.app.inject({
      method: 'GET',
      url: '/api/permissions',
      headers: { authorization: 'Basic b3duZXI6cGFzcw==' },
    });
    expectProblem(basic, 401, 'unauthorized');
  });

  test('open to any session and any API key, whatever their permissions', async (t) => {
    const ta = await buildTestApp(t, engine);
    const expected = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json();
    // An operator whose role holds no roles:* permission at all.
    const op = await newOperator(ta, ['leads:view']);
    const bySession = await call(ta.app, op.token, { method: 'GET', url: '/api/permissions' });
    assert.equal(bySession.statusCode, 200);
    assert.deepEqual(bySession.json(), expected);
    // A key with a single unrelated scope.
    const key = await newApiKey(ta, ['leads:view'], { token: op.token });
    const byKey = await call(ta.app, key.secret, { method: 'GET', url: '/api/permissions' });
    assert.equal(byKey.statusCode, 200);
    assert.deepEqual(byKey.json(), expected);
    // A revoked key is a bad credential again.
    const revoked = await call(ta.app, op.token, { method: 'POST', url: `/api/api-keys/${key.id}/revoke` });
    assert.equal(revoked.statusCode, 200);
    expectProblem(await call(ta.app, key.secret, { method: 'GET', url: '/api/permissions' }), 401, 'unauthorized');
  });
});

// The vocabulary also says which permissions an API key can use at all, read from the routes'
// declared access: the key editor offers only those (issue 26: scopes no key can use were
// offered, and granted nothing).
forEachDatabase('permission vocabulary', (engine) => {
  test('a permission is key-usable exactly when some route a key may call needs it; keys cannot use the person-only ones', async (t) => {
    const ta = await buildTestApp(t, engine);
    const vocabulary = await getJson(ta, '/api/permissions');
    const usable = new Map<string, boolean>(
      vocabulary.modules.flatMap((m: { actions: { permission: string; key_usable: boolean }[] }) =>
        m.actions.map((a) => [a.permission, a.key_usable] as const),
      ),
    );
    assert.equal(usable.size, vocabulary.permissions.length, 'every permission is judged');
    for (const [permission, forKeys] of usable) {
      const routes = ta.app.routeTable.filter((r) => r.access.permission === permission);
      assert.equal(forKeys, routes.length === 0 || routes.some((r) => !r.access.sessionOnly), permission);
    }
    // The allow-list and hosting need a person; reading leads (and their contacts) does not.
    assert.equal(usable.get('settings:edit'), false);
    assert.equal(usable.get('hosting:view'), false);
    assert.equal(usable.get('leads:view'), true);
    assert.equal(usable.get('leads:contacts'), true, 'no route declares it: it unmasks what lead reads show');
    assert.equal(usable.get('webhooks:edit'), true);

    // And it holds over HTTP: a key scoped to settings:view and settings:edit reads nothing there.
    const key = await newApiKey(ta, ['settings:view', 'settings:edit']);
    const read = await call(ta.app, key.secret, { method: 'GET', url: '/api/settings/security' });
    assert.equal(read.statusCode, 403, read.body);
    assert.equal(read.json().code, 'session_required');
  });
});
