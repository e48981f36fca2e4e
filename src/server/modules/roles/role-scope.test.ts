// A role's scope through the API (issue 27 item 5): its ids are checked, account-wide permissions
// refused, the admin role never scoped, no one grants a scope wider than their own; an open scope
// adds no clause to the leads search; a webhook of a scoped owner sends nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, OWNER } from '../../../../test/helpers.js';
import { SCOPED_PERMISSIONS, scopedOperator, world } from '../../../../test/scoped-world.js';
import { ownerCheck } from '../webhooks/access.js';

forEachDatabase('role scope API', (engine) => {
  test('ids are checked, account-wide permissions refused, the admin role never scoped, no one grants a wider scope', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const make = (token: string, body: object) =>
      call(ta.app, token, { method: 'POST', url: '/api/roles', payload: { name: `r${Math.random()}`, ...body } });

    const unknown = await make(ta.ownerToken, {
      permissions: ['leads:view'],
      scope: { traffic_provider_ids: ['no-such-provider'], partner_ids: ['no-such-partner'] },
    });
    const e1 = expectProblem(unknown, 400, 'validation_failed');
    assert.deepEqual(e1.errors?.map((e) => e.field).sort(), ['scope.partner_ids', 'scope.traffic_provider_ids']);

    const wide = await make(ta.ownerToken, {
      permissions: ['leads:view', 'audit:view'],
      scope: { traffic_provider_ids: [w.A], partner_ids: null },
    });
    const e2 = expectProblem(wide, 400, 'validation_failed');
    assert.deepEqual(
      e2.errors?.map((e) => e.field),
      ['permissions'],
    );
    assert.match(e2.detail, /audit:view/);

    // An open role answers its scope as nulls.
    const open = await make(ta.ownerToken, { permissions: ['leads:view'] });
    assert.deepEqual(open.json().scope, { traffic_provider_ids: null, partner_ids: null });

    // The admin role is never scoped: it cannot be changed at all.
    const roles = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles' });
    const admin = roles.json().data.find((r: { builtin: boolean }) => r.builtin);
    assert.deepEqual(admin.scope, { traffic_provider_ids: null, partner_ids: null });
    const scopeAdmin = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${admin.id}`,
      payload: { scope: { traffic_provider_ids: [w.A], partner_ids: null } },
    });
    expectProblem(scopeAdmin, 409, 'conflict');

    // A scoped operator who may edit roles grants no more than its own scope.
    const op = await scopedOperator(ta, w, [...SCOPED_PERMISSIONS]);
    for (const scope of [
      { traffic_provider_ids: null, partner_ids: null },
      { traffic_provider_ids: [w.A, w.B], partner_ids: [w.X] },
      { traffic_provider_ids: [w.A], partner_ids: null },
    ]) {
      expectProblem(await make(op.token, { permissions: ['leads:view'], scope }), 403, 'forbidden');
    }
    const same = await make(op.token, {
      permissions: ['leads:view'],
      scope: { traffic_provider_ids: [w.A], partner_ids: [w.X] },
    });
    assert.equal(same.statusCode, 201, same.body);
    // Nor hands an open role to an operator, new or existing (the same permissions, more accounts).
    const hire = await call(ta.app, op.token, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'wider@example.test',
        name: 'Wider',
        password: 'wider-password-1',
        role_id: open.json().id,
        current_password: 'scoped-password-1',
      },
    });
    expectProblem(hire, 403, 'forbidden');
    const other = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/operators',
      payload: {
        email: 'narrow@example.test',
        name: 'Narrow',
        password: 'narrow-password-1',
        role_id: same.json().id,
        current_password: OWNER.password,
      },
    });
    assert.equal(other.statusCode, 201, other.body);
    const promote = await call(ta.app, op.key, {
      method: 'PATCH',
      url: `/api/operators/${other.json().id}`,
      payload: { role_id: open.json().id },
    });
    expectProblem(promote, 403, 'forbidden');
    // Nor changes a role wider than its own.
    const widen = await call(ta.app, op.token, {
      method: 'PATCH',
      url: `/api/roles/${open.json().id}`,
      payload: { name: 'Mine now' },
    });
    expectProblem(widen, 403, 'forbidden');
  });

  test('whoami says whose data the role reads, by name, for its sessions and keys alike; an open role reads null', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const s = await scopedOperator(ta, w);
    const expected = {
      traffic_providers: [{ id: w.A, name: 'Provider InScopeA' }],
      partners: [{ id: w.X, name: 'Partner InScopeX' }],
    };
    for (const cred of [s.token, s.key]) {
      const me = await call(ta.app, cred, { method: 'GET', url: '/api/auth/whoami' });
      assert.equal(me.statusCode, 200, me.body);
      assert.deepEqual(me.json().scope, expected);
    }
    const owner = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/auth/whoami' });
    assert.deepEqual(owner.json().scope, { traffic_providers: null, partners: null });
  });

  test('an open scope adds no clause to the leads search', async (t) => {
    const statements: string[] = [];
    const ta = await buildTestApp(t, engine, { onQuery: (s) => statements.push(s) });
    const w = await world(ta);
    const op = await scopedOperator(ta, w);
    statements.length = 0;
    await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/leads/search?date_type=registration' });
    const open = statements.filter((s) => /from "leads"/.test(s));
    assert.ok(open.length > 0);
    assert.ok(
      open.every((s) => !s.includes('"traffic_provider_id" in (')),
      open.join('\n'),
    );
    statements.length = 0;
    await call(ta.app, op.token, { method: 'GET', url: '/api/leads/search?date_type=registration' });
    assert.ok(
      statements.some((s) => s.includes('"leads"."traffic_provider_id" in (')),
      statements.join('\n'),
    );
  });
});

test("a webhook whose owner's role is scoped sends nothing: it would send the whole account's events", () => {
  const owner = {
    owner_status: 'active' as const,
    owner_builtin: 0,
    owner_permissions: JSON.stringify(['leads:view']),
    owner_scope_traffic_provider_ids: null,
    owner_scope_partner_ids: null,
  };
  assert.equal(ownerCheck(owner)('lead.received'), null);
  assert.match(
    ownerCheck({ ...owner, owner_scope_traffic_provider_ids: JSON.stringify(['p1']) })('lead.received') ?? '',
    /limited to some traffic providers or partners/,
  );
  assert.match(ownerCheck({ ...owner, owner_scope_partner_ids: '[]' })('lead.received') ?? '', /limited/);
});
