import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, forEachDatabase } from '../../../test/helpers.js';
import { compiledOnce, compiledPerShape, rawOnce } from './compiled.js';
import type { DB } from './database.js';

// Roles as the rows to read, picked by their description.
const rolesNamed = compiledOnce((db: DB, description: string, limit: number) =>
  db
    .selectFrom('roles')
    .select(['id', 'description'])
    .where('description', '=', description)
    .where('builtin', '>=', 0)
    .orderBy('id')
    .limit(limit),
);

forEachDatabase('queries compiled once', (engine) => {
  test('each call binds its own arguments, constants stay, and each database keeps its own statement', async (t) => {
    const a = await buildTestApp(t, engine);
    const b = await buildTestApp(t, engine);
    const at = '2026-01-01T00:00:00.000Z';
    const role = (id: string, description: string) => ({
      id,
      name: id,
      description,
      builtin: 0,
      permissions: '[]',
      created_at: at,
      updated_at: at,
    });
    await a.db
      .insertInto('roles')
      .values([role('r-x1', 'X'), role('r-x2', 'X'), role('r-y1', 'Y')])
      .execute();
    assert.deepEqual(await rolesNamed(a.db, 'X', 5), [
      { id: 'r-x1', description: 'X' },
      { id: 'r-x2', description: 'X' },
    ]);
    assert.deepEqual(
      await rolesNamed(a.db, 'X', 1),
      [{ id: 'r-x1', description: 'X' }],
      'the second argument is the limit, not the first',
    );
    assert.deepEqual(await rolesNamed(a.db, 'Y', 5), [{ id: 'r-y1', description: 'Y' }]);
    assert.deepEqual(await rolesNamed(b.db, 'X', 5), [], 'another database: its own rows');
    assert.deepEqual(
      (await rawOnce<{ one: number }>('select 1 as one')(a.db)).map((r) => Number(r.one)),
      [1],
    );
  });

  test("a transaction and a pinned connection use their database's statement, compiled once", async (t) => {
    const { db } = await buildTestApp(t, engine);
    let builds = 0;
    const counted = compiledOnce((d: DB, name: string) => {
      builds++;
      return d.selectFrom('roles').select('name').where('name', '=', name);
    });
    const admin = await db.selectFrom('roles').select('name').executeTakeFirstOrThrow();
    assert.deepEqual(await counted(db, admin.name), [admin]);
    assert.deepEqual(await db.transaction().execute((tx) => counted(tx, admin.name)), [admin]);
    assert.deepEqual(await db.connection().execute((conn) => counted(conn, admin.name)), [admin]);
    assert.equal(builds, 1);
  });

  test('an argument bound twice lands in both places; one not bound at all is refused when first built', async (t) => {
    const { db } = await buildTestApp(t, engine);
    const twice = compiledOnce((d: DB, v: string) =>
      d
        .selectFrom('roles')
        .select('id')
        .where((eb) => eb.or([eb('name', '=', v), eb('id', '=', v)])),
    );
    const admin = await db.selectFrom('roles').select(['id', 'name']).executeTakeFirstOrThrow();
    assert.deepEqual(await twice(db, admin.name), [{ id: admin.id }]);
    assert.deepEqual(await twice(db, admin.id), [{ id: admin.id }]);
    assert.deepEqual(await twice(db, 'neither'), []);
    const unused = compiledOnce((d: DB, _name: string) => d.selectFrom('roles').select('id'));
    await assert.rejects(unused(db, 'X'), /argument 1 of 1 is not bound/);
  });

  test('per shape: rows of different columns get their own statement, values are bound anew each call', async (t) => {
    const { db } = await buildTestApp(t, engine);
    const at = '2026-01-01T00:00:00.000Z';
    let builds = 0;
    type Role = { id: string; name: string; description?: string; builtin: number; permissions: string };
    const insertRoles = compiledPerShape((d: DB, variant: string, rows: Role[]) => {
      builds++;
      const q = d
        .insertInto('roles')
        .values(rows.map((r) => ({ description: undefined, ...r, created_at: at, updated_at: at })) as never);
      return variant === 'returning' ? q.returning('id') : q;
    });
    const role = (id: string, description?: string): Role => ({
      id,
      name: `name-${id}`,
      ...(description === undefined ? {} : { description }),
      builtin: 0,
      permissions: '[]',
    });
    await insertRoles(db, '', [role('p1', 'one')]);
    await insertRoles(db, '', [role('p2', 'two')]);
    assert.equal(builds, 1, 'the same columns: built once');
    await insertRoles(db, '', [role('p3')]);
    assert.equal(builds, 2, 'without a description (its default): another statement');
    await insertRoles(db, '', [role('p4', 'four'), role('p5', 'five')]);
    assert.equal(builds, 3, 'two rows: another statement');
    assert.deepEqual(await insertRoles(db, 'returning', [role('p6', 'six')]), [{ id: 'p6' }]);
    assert.equal(builds, 4, 'another variant: another statement');
    const rows = await db
      .selectFrom('roles')
      .select(['id', 'name', 'description'])
      .where('id', 'like', 'p%')
      .orderBy('id')
      .execute();
    assert.deepEqual(
      rows.map((r) => [r.id, r.name, r.description]),
      [
        ['p1', 'name-p1', 'one'],
        ['p2', 'name-p2', 'two'],
        ['p3', 'name-p3', ''],
        ['p4', 'name-p4', 'four'],
        ['p5', 'name-p5', 'five'],
        ['p6', 'name-p6', 'six'],
      ],
    );
  });

  test('per shape: a value not bound, or data that is not plain, is refused', async (t) => {
    const { db } = await buildTestApp(t, engine);
    const unbound = compiledPerShape((d: DB, _v: string, _data: { name: string }) =>
      d.selectFrom('roles').select('id'),
    );
    await assert.rejects(unbound(db, '', { name: 'x' }), /value 1 of 1 is not bound/);
    const branching = compiledPerShape((d: DB, _v: string, data: { admin: boolean }) =>
      // Branching on a value sees its marker, not the value: the value is then not bound.
      data.admin ? d.selectFrom('roles').select('id') : d.selectFrom('roles').select('id').where('builtin', '=', 1),
    );
    await assert.rejects(branching(db, '', { admin: false }), /not bound/);
    const plain = compiledPerShape((d: DB, _v: string, data: { at: string }) =>
      d.selectFrom('roles').select('id').where('created_at', '=', data.at),
    );
    await assert.rejects(plain(db, '', { at: new Date() as unknown as string }), /must be plain/);
  });
});
