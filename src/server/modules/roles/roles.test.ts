import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newApiKey,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface RoleBody {
  id: string;
  name: string;
  description: string;
  permissions: string[];
  builtin: boolean;
  created_at: string;
  updated_at: string;
}

const createRole = (ta: TestApp, payload: Record<string, unknown>, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: '/api/roles', payload });

function fieldsOf(res: LightMyRequestResponse): string[] {
  const p = expectProblem(res, 400, 'validation_failed');
  assert.ok(Array.isArray(p.errors) && p.errors.length > 0, 'a validation problem lists its fields');
  return p.errors!.map((e) => e.field);
}

/** Follows next_cursor to the end; returns every page. */
async function walk(ta: TestApp, url: string, token = ta.ownerToken) {
  const pages: { data: RoleBody[]; next_cursor: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const res = await call(ta.app, token, {
      method: 'GET',
      url: cursor ? `${url}${sep}cursor=${encodeURIComponent(cursor)}` : url,
    });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json();
    pages.push(page);
    cursor = page.next_cursor;
    assert.ok(pages.length < 100, 'paging terminates');
  } while (cursor);
  return pages;
}

const adminRole = async (ta: TestApp) =>
  await ta.db.selectFrom('roles').select(['id', 'name']).where('builtin', '=', 1).executeTakeFirstOrThrow();

forEachDatabase('roles', (engine) => {
  test('create answers 201 with the role; get returns the same; the row is stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    const before = new Date().toISOString();
    const res = await createRole(ta, {
      name: '  Support  ',
      description: 'Reads leads',
      permissions: ['leads:view', 'analytics:view'],
    });
    assert.equal(res.statusCode, 201, res.body);
    const role = res.json() as RoleBody;
    assert.equal(typeof role.id, 'string');
    assert.ok(role.id.length > 0);
    assert.equal(role.name, 'Support', 'the name is trimmed');
    assert.equal(role.description, 'Reads leads');
    assert.deepEqual([...role.permissions].sort(), ['analytics:view', 'leads:view']);
    assert.equal(role.builtin, false);
    assert.match(role.created_at, ISO);
    assert.match(role.updated_at, ISO);
    assert.ok(role.created_at >= before);

    const got = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${role.id}` });
    assert.equal(got.statusCode, 200);
    assert.deepEqual(got.json(), role);

    const row = await ta.db.selectFrom('roles').selectAll().where('id', '=', role.id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Support');
    assert.deepEqual(JSON.parse(row.permissions).sort(), ['analytics:view', 'leads:view']);
    assert.equal(Number(row.builtin), 0);

    // Description is optional and defaults to empty; an empty permission list is allowed.
    const bare = await createRole(ta, { name: 'Nothing', permissions: [] });
    assert.equal(bare.statusCode, 201, bare.body);
    assert.equal(bare.json().description, '');
    assert.deepEqual(bare.json().permissions, []);
  });

  test('list pages by cursor: every role exactly once, no gaps', async (t) => {
    const ta = await buildTestApp(t, engine);
    const made: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await createRole(ta, { name: `role ${i}`, permissions: i % 2 ? ['leads:view'] : [] });
      assert.equal(res.statusCode, 201);
      made.push(res.json().id);
    }
    const pages = await walk(ta, '/api/roles?limit=2');
    // 6 made + admin = 7 roles → pages of 2, 2, 2, 1.
    assert.deepEqual(
      pages.map((p) => p.data.length),
      [2, 2, 2, 1],
    );
    assert.equal(pages[pages.length - 1].next_cursor, null);
    const ids = pages.flatMap((p) => p.data.map((r) => r.id));
    assert.equal(new Set(ids).size, ids.length, 'no role is listed twice');
    const inDb = (await ta.db.selectFrom('roles').select('id').execute()).map((r) => r.id);
    assert.deepEqual([...ids].sort(), [...inDb].sort());
    for (const id of made) assert.ok(ids.includes(id));

    // Without limit: one page (default 50) with everything, and no cursor.
    const all = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles' });
    assert.equal(all.json().data.length, 7);
    assert.equal(all.json().next_cursor, null);

    // A page size that divides the count exactly still ends with next_cursor null, no empty tail needed.
    const pages7 = await walk(ta, '/api/roles?limit=7');
    assert.equal(pages7.length, 1);
    assert.equal(pages7[0].data.length, 7);
  });

  test('list rejects a bad limit or cursor with 400 naming the parameter', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const limit of ['0', '501', 'abc']) {
      const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles?limit=${limit}` });
      assert.deepEqual(fieldsOf(res), ['limit'], `limit=${limit}`);
    }
    const res = await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles?cursor=not-a-cursor' });
    assert.deepEqual(fieldsOf(res), ['cursor']);
  });

  test('patch changes name, description and permissions', async (t) => {
    const ta = await buildTestApp(t, engine);
    const role = (await createRole(ta, { name: 'Viewer', permissions: ['leads:view'] })).json() as RoleBody;
    const res = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${role.id}`,
      payload: { name: 'Editor', description: 'Edits leads', permissions: ['leads:view', 'leads:edit'] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const updated = res.json() as RoleBody;
    assert.equal(updated.id, role.id);
    assert.equal(updated.name, 'Editor');
    assert.equal(updated.description, 'Edits leads');
    assert.deepEqual([...updated.permissions].sort(), ['leads:edit', 'leads:view']);
    assert.equal(updated.created_at, role.created_at);
    assert.ok(updated.updated_at >= role.updated_at);
    assert.deepEqual(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${role.id}` })).json(),
      updated,
    );

    // A partial patch leaves the other fields alone.
    const partial = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${role.id}`,
      payload: { permissions: [] },
    });
    assert.equal(partial.statusCode, 200);
    assert.equal(partial.json().name, 'Editor');
    assert.equal(partial.json().description, 'Edits leads');
    assert.deepEqual(partial.json().permissions, []);
    const row = await ta.db
      .selectFrom('roles')
      .select('permissions')
      .where('id', '=', role.id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.permissions), []);

    // Renaming a role to its own name is not a conflict.
    const same = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${role.id}`,
      payload: { name: 'Editor' },
    });
    assert.equal(same.statusCode, 200);

    // A permission change applies to its holders on their next request.
    const op = await newOperator(ta, ['roles:view']);
    assert.equal((await call(ta.app, op.token, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    const drop = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/roles/${op.roleId}`,
      payload: { permissions: ['leads:view'] },
    });
    assert.equal(drop.statusCode, 200);
    expectProblem(await call(ta.app, op.token, { method: 'GET', url: '/api/roles' }), 403, 'forbidden');
  });

  test('delete answers 204, then the role is gone (404)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const role = (await createRole(ta, { name: 'Temp', permissions: ['leads:view'] })).json() as RoleBody;
    const del = await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${role.id}` });
    assert.equal(del.statusCode, 204);
    assert.equal(del.body, '');
    expectProblem(await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${role.id}` }), 404, 'not_found');
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${role.id}` }),
      404,
      'not_found',
    );
    assert.equal(await ta.db.selectFrom('roles').select('id').where('id', '=', role.id).executeTakeFirst(), undefined);
    // The name is free again.
    assert.equal((await createRole(ta, { name: 'Temp', permissions: [] })).statusCode, 201);
  });

  test('404 for ids that do not exist', async (t) => {
    const ta = await buildTestApp(t, engine);
    for (const id of ['00000000-0000-7000-8000-000000000000', 'nope']) {
      expectProblem(await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${id}` }), 404, 'not_found');
      expectProblem(
        await call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/roles/${id}`, payload: { name: 'x' } }),
        404,
        'not_found',
      );
      expectProblem(await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${id}` }), 404, 'not_found');
    }
  });

  test('400 validation names each bad field, and nothing is stored', async (t) => {
    const ta = await buildTestApp(t, engine);
    const count = async () => (await ta.db.selectFrom('roles').select('id').execute()).length;
    const before = await count();

    assert.deepEqual(fieldsOf(await createRole(ta, { name: 'R', permissions: ['leads:fly'] })), ['permissions[0]']);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: 'R', permissions: ['leads:view', 'nope'] })), [
      'permissions[1]',
    ]);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: '', permissions: [] })), ['name']);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: '   ', permissions: [] })), ['name']);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: 'R', permissions: [], colour: 'red' })), ['colour']);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: 'R' })), ['permissions']);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: 'R', permissions: 'leads:view' })), ['permissions']);
    assert.deepEqual(fieldsOf(await createRole(ta, { name: 'R', permissions: ['leads:view', 'leads:view'] })), [
      'permissions',
    ]);
    // Several bad fields at once: one entry each.
    assert.deepEqual(fieldsOf(await createRole(ta, { name: '', permissions: ['x'], extra: 1 })).sort(), [
      'extra',
      'name',
      'permissions[0]',
    ]);
    assert.equal(await count(), before);

    const role = (await createRole(ta, { name: 'Valid', permissions: ['leads:view'] })).json() as RoleBody;
    const patch = (payload: unknown) =>
      call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/roles/${role.id}`, payload: payload as object });
    assert.deepEqual(fieldsOf(await patch({ permissions: ['leads:fly'] })), ['permissions[0]']);
    assert.deepEqual(fieldsOf(await patch({ name: '' })), ['name']);
    assert.deepEqual(fieldsOf(await patch({ builtin: true })), ['builtin']);
    expectProblem(await patch({}), 400, 'validation_failed');
    const row = await ta.db.selectFrom('roles').selectAll().where('id', '=', role.id).executeTakeFirstOrThrow();
    assert.equal(row.name, 'Valid');
    assert.deepEqual(JSON.parse(row.permissions), ['leads:view']);
    assert.equal(Number(row.builtin), 0);
  });

  test('409 for a duplicate name, on create and on rename', async (t) => {
    const ta = await buildTestApp(t, engine);
    assert.equal((await createRole(ta, { name: 'Sales', permissions: [] })).statusCode, 201);
    expectProblem(await createRole(ta, { name: 'Sales', permissions: ['leads:view'] }), 409, 'conflict');
    expectProblem(await createRole(ta, { name: ' Sales ', permissions: [] }), 409, 'conflict');
    expectProblem(await createRole(ta, { name: 'admin', permissions: [] }), 409, 'conflict');
    const other = (await createRole(ta, { name: 'Other', permissions: [] })).json() as RoleBody;
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/roles/${other.id}`, payload: { name: 'Sales' } }),
      409,
      'conflict',
    );
    const rows = await ta.db.selectFrom('roles').select('name').where('name', '=', 'Sales').execute();
    assert.equal(rows.length, 1);
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${other.id}` })).json().name,
      'Other',
    );
  });

  test('the built-in admin role lists every permission and cannot be changed or deleted (409)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRole(ta);
    const all: string[] = (await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/permissions' })).json()
      .permissions;
    const got = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${admin.id}` });
    assert.equal(got.statusCode, 200);
    assert.equal(got.json().name, 'admin');
    assert.equal(got.json().builtin, true);
    assert.deepEqual([...got.json().permissions].sort(), [...all].sort());

    for (const payload of [{ permissions: ['leads:view'] }, { name: 'root' }, { description: 'changed' }]) {
      expectProblem(
        await call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/roles/${admin.id}`, payload }),
        409,
        'conflict',
      );
    }
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${admin.id}` }),
      409,
      'conflict',
    );
    const after = await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${admin.id}` });
    assert.deepEqual(after.json(), got.json());
    // The owner still holds everything.
    assert.equal((await call(ta.app, ta.ownerToken, { method: 'GET', url: '/api/roles' })).statusCode, 200);
  });

  test('409 deleting a role an operator still holds; once reassigned it can go', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['leads:view']);
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${op.roleId}` }),
      409,
      'conflict',
    );
    assert.ok(await ta.db.selectFrom('roles').select('id').where('id', '=', op.roleId).executeTakeFirst());
    // A disabled holder still counts.
    assert.equal(
      (
        await call(ta.app, ta.ownerToken, {
          method: 'PATCH',
          url: `/api/operators/${op.id}`,
          payload: { status: 'disabled' },
        })
      ).statusCode,
      200,
    );
    expectProblem(
      await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${op.roleId}` }),
      409,
      'conflict',
    );
    const other = (await createRole(ta, { name: 'Other', permissions: [] })).json() as RoleBody;
    assert.equal(
      (
        await call(ta.app, ta.ownerToken, {
          method: 'PATCH',
          url: `/api/operators/${op.id}`,
          payload: { role_id: other.id },
        })
      ).statusCode,
      200,
    );
    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'DELETE', url: `/api/roles/${op.roleId}` })).statusCode,
      204,
    );
  });

  test('a non-admin with roles:edit cannot grant what they do not hold (403 forbidden)', async (t) => {
    const ta = await buildTestApp(t, engine);
    const op = await newOperator(ta, ['roles:view', 'roles:edit', 'leads:view']);
    const count = async () => (await ta.db.selectFrom('roles').select('id').execute()).length;
    const before = await count();

    // Create with a permission not held: refused, nothing made.
    expectProblem(
      await createRole(ta, { name: 'Lead editor', permissions: ['leads:view', 'leads:edit'] }, op.token),
      403,
      'forbidden',
    );
    expectProblem(await createRole(ta, { name: 'Auditor', permissions: ['audit:view'] }, op.token), 403, 'forbidden');
    assert.equal(await count(), before);

    // Within what they hold: allowed.
    const mine = await createRole(ta, { name: 'Lead viewer', permissions: ['leads:view'] }, op.token);
    assert.equal(mine.statusCode, 201, mine.body);
    const mineId = mine.json().id;

    // Widening it beyond what they hold: refused, unchanged.
    expectProblem(
      await call(ta.app, op.token, {
        method: 'PATCH',
        url: `/api/roles/${mineId}`,
        payload: { permissions: ['leads:view', 'flows:edit'] },
      }),
      403,
      'forbidden',
    );
    const row = await ta.db
      .selectFrom('roles')
      .select('permissions')
      .where('id', '=', mineId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(JSON.parse(row.permissions), ['leads:view']);
    assert.equal(
      (await call(ta.app, op.token, { method: 'PATCH', url: `/api/roles/${mineId}`, payload: { name: 'Readers' } }))
        .statusCode,
      200,
    );

    // A role that already holds more than they do cannot be edited or deleted by them either.
    const bigger = (
      await createRole(ta, { name: 'Flow admin', permissions: ['flows:view', 'flows:edit'] })
    ).json() as RoleBody;
    expectProblem(
      await call(ta.app, op.token, { method: 'PATCH', url: `/api/roles/${bigger.id}`, payload: { name: 'Renamed' } }),
      403,
      'forbidden',
    );
    expectProblem(
      await call(ta.app, op.token, { method: 'PATCH', url: `/api/roles/${bigger.id}`, payload: { permissions: [] } }),
      403,
      'forbidden',
    );
    expectProblem(await call(ta.app, op.token, { method: 'DELETE', url: `/api/roles/${bigger.id}` }), 403, 'forbidden');
    const biggerRow = await ta.db.selectFrom('roles').selectAll().where('id', '=', bigger.id).executeTakeFirstOrThrow();
    assert.equal(biggerRow.name, 'Flow admin');
    assert.deepEqual(JSON.parse(biggerRow.permissions), ['flows:view', 'flows:edit']);
  });

  test('401 without credentials on every roles route', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRole(ta);
    const requests = [
      { method: 'GET', url: '/api/roles' },
      { method: 'GET', url: `/api/roles/${admin.id}` },
      { method: 'POST', url: '/api/roles', payload: { name: 'x', permissions: [] } },
      { method: 'PATCH', url: `/api/roles/${admin.id}`, payload: { name: 'x' } },
      { method: 'DELETE', url: `/api/roles/${admin.id}` },
    ] as const;
    for (const r of requests) {
      const res = await call(ta.app, null, { ...r });
      expectProblem(res, 401, 'unauthorized');
      assert.match(String(res.headers['www-authenticate']), /^Bearer/);
    }
    assert.equal((await ta.db.selectFrom('roles').select('id').execute()).length, 1);
  });

  test('403 without roles:view for reads and without roles:edit for writes', async (t) => {
    const ta = await buildTestApp(t, engine);
    const admin = await adminRole(ta);
    const target = (await createRole(ta, { name: 'Target', permissions: [] })).json() as RoleBody;

    const nobody = await newOperator(ta, ['leads:view']);
    expectProblem(await call(ta.app, nobody.token, { method: 'GET', url: '/api/roles' }), 403, 'forbidden');
    expectProblem(await call(ta.app, nobody.token, { method: 'GET', url: `/api/roles/${admin.id}` }), 403, 'forbidden');

    const viewer = await newOperator(ta, ['roles:view']);
    assert.equal((await call(ta.app, viewer.token, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    assert.equal((await call(ta.app, viewer.token, { method: 'GET', url: `/api/roles/${target.id}` })).statusCode, 200);
    expectProblem(await createRole(ta, { name: 'x', permissions: [] }, viewer.token), 403, 'forbidden');
    expectProblem(
      await call(ta.app, viewer.token, { method: 'PATCH', url: `/api/roles/${target.id}`, payload: { name: 'y' } }),
      403,
      'forbidden',
    );
    expectProblem(
      await call(ta.app, viewer.token, { method: 'DELETE', url: `/api/roles/${target.id}` }),
      403,
      'forbidden',
    );

    // A key is held to its scopes: view scope only → every write is insufficient_scope.
    const viewKey = await newApiKey(ta, ['roles:view']);
    assert.equal((await call(ta.app, viewKey.secret, { method: 'GET', url: '/api/roles' })).statusCode, 200);
    expectProblem(await createRole(ta, { name: 'x', permissions: [] }, viewKey.secret), 403, 'insufficient_scope');
    expectProblem(
      await call(ta.app, viewKey.secret, { method: 'DELETE', url: `/api/roles/${target.id}` }),
      403,
      'insufficient_scope',
    );
    // No roles scope at all → even reading is refused.
    const otherKey = await newApiKey(ta, ['leads:view']);
    expectProblem(await call(ta.app, otherKey.secret, { method: 'GET', url: '/api/roles' }), 403, 'insufficient_scope');
    // An edit key works, granting only what the key itself holds.
    const editKey = await newApiKey(ta, ['roles:view', 'roles:edit', 'leads:view']);
    assert.equal(
      (await createRole(ta, { name: 'By key', permissions: ['leads:view'] }, editKey.secret)).statusCode,
      201,
    );

    assert.equal(
      (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/roles/${target.id}` })).json().name,
      'Target',
    );
  });
});
