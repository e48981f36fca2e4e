// The access rules of the contract, held against every operation the server documents (so a
// new route is covered the day it is added): no credential → 401 with WWW-Authenticate; an API
// key on a session-only operation → 403 session_required; an operator whose role lacks the
// operation's permission → 403. Path parameters are placeholders: access is decided first.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALL_PERMISSIONS } from '../src/server/auth/permissions.js';
import { insertTrafficProvider } from './fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  newPortalUser,
} from './helpers.js';

const HTTP_METHODS = new Set(['get', 'put', 'post', 'patch', 'delete']);

forEachDatabase('access to every documented operation', (engine) => {
  test('401 without a credential, 403 session_required for a key, 403 without the permission', async (t) => {
    const ta = await buildTestApp(t, engine);
    const doc = (await ta.app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    const key = await newApiKey(ta, [...ALL_PERMISSIONS]);
    const nobody = await newOperator(ta, []);
    const seen = { anonymous: 0, sessionOnly: 0, permission: 0, portal: 0 };
    const portal = await newPortalUser(ta, await insertTrafficProvider(ta.db));
    const viewKey = await call(ta.app, portal.token, {
      method: 'POST',
      url: '/api/portal/api-keys',
      payload: { name: 'view only', scopes: ['portal:view'] },
    });
    const portalView = viewKey.json().secret as string;

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

        if (String(op['x-permission']).startsWith('portal:')) {
          // A traffic provider's portal: operators' credentials are refused outright (401); a
          // portal key on a session-only operation gets session_required; a view-only portal key
          // is refused every portal:edit operation.
          expectProblem(await send(key.secret), 401, 'unauthorized');
          expectProblem(await send(nobody.token), 401, 'unauthorized');
          if (op['x-session-only']) expectProblem(await send(portal.key), 403, 'session_required');
          else if (op['x-permission'] === 'portal:edit')
            expectProblem(await send(portalView), 403, 'insufficient_scope');
          seen.portal++;
          continue;
        }
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
    assert.ok(
      seen.anonymous > 60 && seen.sessionOnly > 15 && seen.permission > 40 && seen.portal > 10,
      JSON.stringify(seen),
    );
  });
});
