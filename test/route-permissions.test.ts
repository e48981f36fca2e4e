// Each route works with exactly the permission it declares, and with nothing less. Derived from
// the server's own route table (app.routeTable), so a route is covered the day it is added:
//   - the declared permission is the one its path and method call for (module from the path,
//     `view` for GET, `edit` for a write): DELETE /api/partners/{id} asking campaigns:edit fails here;
//   - an operator whose role holds exactly that permission gets past the guard (any answer but
//     401/403: 2xx, 400, 404, 409 all prove the guard let it through), and so does an API key
//     holding only that scope, made by that operator (keys only where the route is open to keys);
//   - an operator whose role holds every permission but that one gets 403 `forbidden` naming it,
//     and a key with every scope but that one (made by the owner, who holds all) 403 `insufficient_scope`.
// Path parameters are ids of real objects made first, so the handlers run on something.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { ALL_PERMISSIONS, type Permission } from '../src/server/auth/permissions.js';
import type { RouteInfo } from '../src/server/types.js';
import { insertCampaign, insertFlow, insertLeads, insertPartner, insertTrafficProvider } from './fixtures.js';
import { buildTestApp, call, forEachDatabase, newApiKey, newOperator, OWNER, type TestApp } from './helpers.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The module a path belongs to: the permission prefix a route under it must ask for. */
const MODULE_OF_PATH: [prefix: string, module: string][] = [
  ['/api/roles', 'roles'],
  ['/api/operators', 'operators'],
  ['/api/settings/security', 'settings'],
  ['/api/audit-log', 'audit'],
  ['/api/partners', 'partners'],
  ['/api/traffic-providers', 'traffic_providers'],
  ['/api/campaigns', 'campaigns'],
  ['/api/flows', 'flows'],
  ['/api/routing', 'flows'],
  ['/api/leads', 'leads'],
  ['/api/analytics', 'analytics'],
  ['/api/hosting', 'hosting'],
  ['/api/webhooks', 'webhooks'],
  ['/api/blocklists', 'quality'],
  ['/api/quality', 'quality'],
];

/** Paths whose every route, reads included, asks for the edit permission: re-injection jobs and rules, CSV imports (contract §7, leads:edit). */
const EDIT_ONLY: [prefix: string, permission: string][] = [
  ['/api/injections', 'leads:edit'],
  ['/api/injection-rules', 'leads:edit'],
  ['/api/imports', 'leads:edit'],
];

const expectedPermission = (r: RouteInfo) => {
  const editOnly = EDIT_ONLY.find(([prefix]) => r.url === prefix || r.url.startsWith(`${prefix}/`))?.[1];
  if (editOnly) return editOnly;
  const module = MODULE_OF_PATH.find(([prefix]) => r.url === prefix || r.url.startsWith(`${prefix}/`))?.[1];
  return module && `${module}:${WRITES.has(r.method) ? 'edit' : 'view'}`;
};

/**
 * Backups are for the built-in admin role only (contract rule 17), on top of hosting:view/edit:
 * an operator holding the permission is refused by the guard's admins-only check, which says so.
 */
const adminOnly = (r: RouteInfo) => !!r.access.adminOnly;

/**
 * Use cases that need a second permission beyond the route's (the guard let the call through;
 * the use case refuses with 403 naming the other one): "View as provider" shows the provider's
 * leads, so it needs leads:view too.
 */
const ALSO_NEEDS: Record<string, Permission> = { 'POST /api/traffic-providers/:id/view-as': 'leads:view' };
const refusedForOther = (r: RouteInfo, res: LightMyRequestResponse) => {
  const other = ALSO_NEEDS[`${r.method} ${r.url}`];
  return !!other && res.statusCode === 403 && String(res.json().detail).includes(other);
};

interface Fixtures {
  [module: string]: string;
}

async function makeFixtures(ta: TestApp): Promise<Fixtures> {
  const partner = await insertPartner(ta.db);
  const provider = await insertTrafficProvider(ta.db);
  const flow = await insertFlow(ta.db, [partner]);
  const campaign = await insertCampaign(ta.db, provider, flow);
  const [lead] = await insertLeads(ta.db, [{ traffic_provider_id: provider, campaign_id: campaign, flow_id: flow }]);
  // A role holding nothing: editing or deleting a role (or its operator) that holds permissions the
  // caller lacks is refused on purpose (no escalation), which is not what this test is about.
  const role = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/roles',
    payload: { name: 'fixture role', permissions: [] },
  });
  assert.equal(role.statusCode, 201, role.body);
  const operator = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/operators',
    payload: {
      email: 'fixture-operator@example.test',
      name: 'Fixture',
      password: 'fixture-password-1',
      role_id: role.json().id,
      current_password: OWNER.password,
    },
  });
  assert.equal(operator.statusCode, 201, operator.body);
  return {
    partners: partner,
    traffic_providers: provider,
    flows: flow,
    campaigns: campaign,
    leads: lead,
    roles: role.json().id,
    operators: operator.json().id,
  };
}

/** A concrete path: `:id` is the id of a real object of the route's module, other params 'x1'. */
const concrete = (r: RouteInfo, fixtures: Fixtures, module: string) =>
  r.url.replace(/:id\b/g, fixtures[module] ?? 'x1').replace(/:[A-Za-z_]+/g, 'x1');

const describe = (res: LightMyRequestResponse) => `${res.statusCode} ${res.body.slice(0, 200)}`;

forEachDatabase('every route with exactly its declared permission', (engine) => {
  test('passes the guard with exactly that permission (session and key); 403 with every other permission but that one', async (t) => {
    const ta = await buildTestApp(t, engine);
    const routes = ta.app.routeTable.filter(
      (r): r is RouteInfo & { access: { permission: Permission } } => !r.hidden && !!r.access.permission,
    );
    assert.ok(routes.length > 40, `${routes.length} routes declare a permission`);

    // The declared permission is the one the path and method call for.
    const misdeclared = routes
      .filter((r) => expectedPermission(r) !== r.access.permission)
      .map(
        (r) =>
          `${r.method} ${r.url} asks ${r.access.permission}, expected ${expectedPermission(r) ?? '(no module for this path: add it above)'}`,
      );
    assert.deepEqual(misdeclared, []);

    const fixtures = await makeFixtures(ta);
    const failures: string[] = [];
    const permissions = [...new Set(routes.map((r) => r.access.permission))];
    const checked = { exact: 0, exactKey: 0, without: 0, withoutKey: 0 };
    const answers: Record<number, number> = {}; // what the calls that passed the guard got

    for (const permission of permissions) {
      const exact = await newOperator(ta, [permission]);
      const without = await newOperator(
        ta,
        ALL_PERMISSIONS.filter((p) => p !== permission),
      );
      const openToKeys = routes.some((r) => r.access.permission === permission && !r.access.sessionOnly);
      const exactKey = openToKeys ? (await newApiKey(ta, [permission], { token: exact.token })).secret : null;
      const withoutKey = openToKeys
        ? (
            await newApiKey(
              ta,
              ALL_PERMISSIONS.filter((p) => p !== permission),
            )
          ).secret
        : null;

      for (const r of routes.filter((r) => r.access.permission === permission)) {
        const module = permission.split(':')[0];
        const url = concrete(r, fixtures, module);
        const where = `${r.method} ${url} (${permission})`;
        const send = (token: string) =>
          call(ta.app, token, {
            method: r.method as 'GET',
            url,
            ...(WRITES.has(r.method) && r.method !== 'DELETE' ? { payload: {} } : {}),
          });
        const passed = (res: LightMyRequestResponse) =>
          ((answers[res.statusCode] = (answers[res.statusCode] ?? 0) + 1), true) && adminOnly(r)
            ? res.statusCode === 403 && res.json().code === 'forbidden' && /admins only/i.test(res.json().detail)
            : refusedForOther(r, res) || (res.statusCode !== 401 && res.statusCode !== 403 && res.statusCode < 500);

        // Refusals first: the objects are still there for the calls that pass.
        const refused = await send(without.token);
        if (!(
          refused.statusCode === 403 &&
          refused.json().code === 'forbidden' &&
          String(refused.json().detail).includes(permission)
        )) {
          failures.push(`${where} with every permission but ${permission}: ${describe(refused)}`);
        }
        checked.without++;
        if (withoutKey && !r.access.sessionOnly) {
          const res = await send(withoutKey);
          if (!(res.statusCode === 403 && res.json().code === 'insufficient_scope'))
            failures.push(`${where} key with every scope but ${permission}: ${describe(res)}`);
          checked.withoutKey++;
        }

        const res = await send(exact.token);
        if (!passed(res)) failures.push(`${where} session with exactly ${permission}: ${describe(res)}`);
        checked.exact++;
        if (exactKey && !r.access.sessionOnly) {
          const res = await send(exactKey);
          if (!passed(res)) failures.push(`${where} key with exactly ${permission}: ${describe(res)}`);
          checked.exactKey++;
        }
      }
    }
    t.diagnostic(JSON.stringify({ checked, answers }));
    assert.deepEqual(failures, []);
    assert.equal(checked.exact, routes.length);
    assert.equal(checked.exactKey, routes.filter((r) => !r.access.sessionOnly).length);
    assert.ok(checked.exactKey > 30, JSON.stringify(checked));
  });
});

forEachDatabase('admin-only routes', (engine) => {
  test('declared on exactly the backups, the licence and privacy (erasures, contact views); refused to an operator holding every permission, open to the admin', async (t) => {
    const ta = await buildTestApp(t, engine);
    const routes = ta.app.routeTable.filter((r) => !r.hidden && r.access.adminOnly);
    const declared = routes.map((r) => `${r.method} ${r.url}`).sort();
    const expected = ta.app.routeTable
      .filter(
        (r) => !r.hidden && ['/api/hosting/backups', '/api/licence', '/api/privacy/'].some((p) => r.url.startsWith(p)),
      )
      .map((r) => `${r.method} ${r.url}`)
      .sort();
    assert.ok(expected.length >= 9, expected.join(', '));
    assert.deepEqual(declared, expected, 'every backup, licence and privacy route, and nothing else, is admins-only');
    assert.ok(
      routes.every((r) => r.access.sessionOnly),
      'admins-only routes are for sessions only',
    );

    const everything = await newOperator(ta, [...ALL_PERMISSIONS]);
    for (const r of routes) {
      const url = r.url.replace(/:[A-Za-z_]+/g, 'x1');
      const send = (token: string) =>
        call(ta.app, token, {
          method: r.method as 'GET',
          url,
          ...(WRITES.has(r.method) && r.method !== 'DELETE' ? { payload: {} } : {}),
        });
      const refused = await send(everything.token);
      assert.equal(refused.statusCode, 403, `${r.method} ${url}: ${describe(refused)}`);
      assert.equal(refused.json().code, 'forbidden');
      assert.match(refused.json().detail, /admins only/i);
      const admin = await send(ta.ownerToken);
      assert.ok(
        admin.statusCode !== 401 && admin.statusCode !== 403 && admin.statusCode < 500,
        `${r.method} ${url} as the admin: ${describe(admin)}`,
      );
    }
  });
});
