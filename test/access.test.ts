// The access rules of the contract, held against every operation the server documents (so a
// new route is covered the day it is added): no credential → 401 with WWW-Authenticate; an API
// key on a session-only operation → 403 session_required; an operator whose role lacks the
// operation's permission → 403. Path parameters are placeholders: access is decided first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import { buildTestApp, call, expectProblem, forEachDatabase, newApiKey, newOperator } from './helpers.js';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'patch', 'delete']);

forEachDatabase('access to every documented operation', (engine) => {
  test('401 without a credential, 403 session_required for a key, 403 without the permission', async (t) => {
    const ta = await buildTestApp(t, engine);
    const doc = (await ta.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const key = await newApiKey(ta, [...ALL_PERMISSIONS]);
    const nobody = await newOperator(ta, []);
    const seen = { anonymous: 0, sessionOnly: 0, permission: 0 };

    for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
      const url = path.replace(/\{[^}]+\}/g, 'x');
      for (const [method, op] of Object.entries<any>(item)) {
        if (!HTTP_METHODS.has(method) || (Array.isArray(op.security) && op.security.length === 0)) continue; // public, or a token in the path
        const where = `${method.toUpperCase()} ${path}`;
        const send = (token: string | null) => call(ta.app, token, { method: method.toUpperCase() as 'GET', url });

        const anonymous = await send(null);
        assert.equal(anonymous.statusCode, 401, `${where} without a credential: ${anonymous.body}`);
        expectProblem(anonymous, 401, 'unauthorized');
        assert.match(String(anonymous.headers['www-authenticate']), /^Bearer/, where);
        seen.anonymous++;
        if (op['x-permission'] === 'intake-token') continue;

        if (op['x-session-only']) {
          expectProblem(await send(key.secret), 403, 'session_required');
          seen.sessionOnly++;
        }
        if (/^[a-z_]+:[a-z]+$/.test(op['x-permission'] ?? '')) {
          const res = await send(nobody.token);
          assert.equal(res.statusCode, 403, `${where} for a role without ${op['x-permission']}: ${res.body}`);
          seen.permission++;
        }
      }
    }
    // The sweep really met each kind (hosting, licence, profile, audit… are among them).
    t.diagnostic(JSON.stringify(seen));
    assert.ok(seen.anonymous > 60 && seen.sessionOnly > 15 && seen.permission > 40, JSON.stringify(seen));
  });
});
