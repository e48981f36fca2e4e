import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { buildTestApp, forEachDatabase, postgresOnly } from '../../../test/helpers.js';
import { isPostgres } from './database.js';
import { pipelined } from './pipelined.js';

const q = (text: string) => CompiledQuery.raw(text);

forEachDatabase('statements sent together (pipelined)', (engine) => {
  test('results come back in order, each statement on its own', async (t) => {
    const { db } = await buildTestApp(t, engine);
    const rows = await db
      .connection()
      .execute((conn) => pipelined(conn, [q('select 1 as n'), q('select 2 as n'), q('select 3 as n')]));
    assert.deepEqual(
      rows.map((r) => Number((r.rows[0] as { n: number }).n)),
      [1, 2, 3],
    );
  });

  test('a failing statement is thrown; on PostgreSQL the statements after it still ran', async (t) => {
    const { db } = await buildTestApp(t, engine);
    const at = '2026-01-01T00:00:00.000Z';
    const insertRole = (id: string) =>
      q(
        `insert into roles (id, name, description, builtin, permissions, created_at, updated_at) values ('${id}', '${id}', '', 0, '[]', '${at}', '${at}')`,
      );
    await assert.rejects(
      db
        .connection()
        .execute((conn) => pipelined(conn, [insertRole('p-1'), q('select * from no_such_table'), insertRole('p-2')])),
      /no_such_table/,
    );
    const ids = (await db.selectFrom('roles').select('id').where('id', 'like', 'p-%').orderBy('id').execute()).map(
      (r) => r.id,
    );
    // Each statement is its own: the first stays written (no transaction spans them); SQLite stops
    // at the failure, PostgreSQL had already sent the third and ran it.
    assert.deepEqual(ids, isPostgres(db) ? ['p-1', 'p-2'] : ['p-1']);
  });
});

postgresOnly('PostgreSQL: a statement sent with a lock runs once the lock is held', async (t) => {
  const { db } = await buildTestApp(t, 'postgres');
  const key = 770_001;
  // Another connection holds the lock: the read sent with the lock must run after its release.
  const [released, read] = await db.connection().execute(async (holder) => {
    await holder.executeQuery(q(`select pg_advisory_lock(${key})`));
    const pair = db
      .connection()
      .execute((conn) =>
        pipelined(conn, [
          q(`select pg_advisory_lock(${key})`),
          q('select (extract(epoch from clock_timestamp()) * 1000000)::bigint::text as at'),
          q('select pg_advisory_unlock_all()'),
        ]),
      );
    await new Promise((r) => setTimeout(r, 200));
    const unlock = await holder.executeQuery(
      q(`select (extract(epoch from clock_timestamp()) * 1000000)::bigint::text as at, pg_advisory_unlock(${key})`),
    );
    return [unlock.rows[0] as { at: string }, (await pair)[1].rows[0] as { at: string }];
  });
  // Microseconds since the epoch: the read's clock is read after the other connection let go.
  assert.ok(BigInt(read.at) >= BigInt(released.at), `read at ${read.at} µs, lock released at ${released.at} µs`);
});
