// The permission vocabulary says which permissions an API key can use at all, read from the
// routes' declared access: the key editor offers only those (issue 26: scopes no key can use
// were offered, and granted nothing).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, getJson, newApiKey } from '../../../../test/helpers.js';

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
