import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, newApiKey, newOperator } from '../../../../test/helpers.js';

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
});
