// writeTransaction: on SQLite concurrent calls share one commit; each still behaves as its own
// transaction run after the ones before it, and one that fails fails alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, forEachDatabase } from '../../../test/helpers.js';
import { writeTransaction } from './write-batch.js';

forEachDatabase('writeTransaction', (engine) => {
  test('each sees the writes before it; a failing one is rolled back alone; answers come after the commit', async (t) => {
    const { db } = await buildTestApp(t, engine);
    await sql`create table wb_counter (id integer primary key, n integer not null)`.execute(db);
    await sql`create table wb_rows (id integer primary key, who integer not null)`.execute(db);
    await sql`insert into wb_counter (id, n) values (1, 0)`.execute(db);

    const N = 40;
    const FAILING = 17;
    const results = await Promise.allSettled(
      Array.from({ length: N }, (_, i) =>
        writeTransaction(db, async (tx) => {
          // Read-then-write: exact only if no other function runs in between.
          // (PostgreSQL runs them concurrently: there the row lock is what serializes them.)
          const read =
            engine === 'postgres'
              ? sql<{ n: number }>`select n from wb_counter where id = 1 for update`
              : sql<{ n: number }>`select n from wb_counter where id = 1`;
          const { n } = (await read.execute(tx)).rows[0];
          await sql`update wb_counter set n = ${Number(n) + 1} where id = 1`.execute(tx);
          await sql`insert into wb_rows (id, who) values (${i}, ${i})`.execute(tx);
          if (i === FAILING) throw new Error('this one fails');
          // Visible to the caller once settled: read outside the transaction right after.
          return i;
        }),
      ),
    );
    for (const [i, r] of results.entries()) {
      if (i === FAILING) assert.equal(r.status === 'rejected' && (r.reason as Error).message, 'this one fails');
      else assert.deepEqual(r, { status: 'fulfilled', value: i });
    }
    const counter = await sql<{ n: number }>`select n from wb_counter where id = 1`.execute(db);
    assert.equal(Number(counter.rows[0].n), N - 1, 'every increment but the failed one, none lost');
    const rows = await sql<{ who: number }>`select who from wb_rows order by who`.execute(db);
    assert.deepEqual(
      rows.rows.map((r) => Number(r.who)),
      Array.from({ length: N }, (_, i) => i).filter((i) => i !== FAILING),
    );

    // A settled call's writes are committed: readable at once.
    const id = await writeTransaction(db, async (tx) => {
      await sql`insert into wb_rows (id, who) values (1000, 1000)`.execute(tx);
      return 1000;
    });
    const seen = await sql<{ who: number }>`select who from wb_rows where id = ${id}`.execute(db);
    assert.equal(seen.rows.length, 1);
  });
});
