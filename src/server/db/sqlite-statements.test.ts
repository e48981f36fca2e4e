import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { lockingTransaction } from './database.js';
import { withStatementCache } from './sqlite-statements.js';

// The SQLite handle Kysely runs on (sqlite-statements.ts) reads rows as arrays and makes the
// objects itself: they must be exactly better-sqlite3's own, before and after the schema moves.

function open(t: { after: (fn: () => void) => void }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lg-statements-'));
  const file = path.join(dir, 'db.sqlite');
  const raw = new SQLite(file);
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: withStatementCache(raw, () => {}) }) });
  t.after(() => {
    void db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { db, raw, file };
}

test('rows are better-sqlite3’s own: keys in order, every value type, a later duplicate name winning; __proto__ only a key', async (t) => {
  const { db, raw } = open(t);
  raw.exec(`create table t (id integer primary key, name text, score real, blob blob, gone text);
    insert into t values (1, 'a', 1.5, x'0102', null), (2, 'b', -3, null, 'x')`);
  const texts = [
    'select * from t order by id',
    'select id, name as x, score as x from t order by id',
    'select name as "constructor", 7 as "a b" from t order by id',
    'select count(*) as n from t where id > 5',
    'select * from t where id > 5',
  ];
  for (const text of texts) {
    const expected = raw.prepare(text).all();
    for (let round = 0; round < 2; round++) {
      const { rows } = await sql.raw(text).execute(db);
      assert.deepEqual(rows, expected, text);
      for (const [i, row] of (rows as Record<string, unknown>[]).entries()) {
        assert.deepEqual(Object.keys(row), Object.keys(expected[i] as object), text);
        assert.equal(Object.getPrototypeOf(row), Object.prototype, text);
      }
    }
  }
  // A column named __proto__ is an own key (better-sqlite3 would set the row's prototype with it).
  const { rows: odd } = await sql.raw('select name as "__proto__" from t where id = 1').execute(db);
  assert.deepEqual(Object.getOwnPropertyDescriptor(odd[0], '__proto__')?.value, 'a');
  assert.equal(Object.getPrototypeOf(odd[0]), Object.prototype);
  // A write with RETURNING is a reader; a plain write reports its changes.
  const { rows } = await sql`insert into t (name) values ('c') returning id, name`.execute(db);
  assert.deepEqual(rows, [{ id: 3, name: 'c' }]);
  const res = await sql`update t set name = 'z' where id < 3`.execute(db);
  assert.equal(res.numAffectedRows, 2n);
  // Streaming reads give the same rows.
  const streamed: unknown[] = [];
  for await (const row of db.selectFrom('t').selectAll().orderBy('id').stream()) streamed.push(row);
  assert.deepEqual(streamed, raw.prepare('select * from t order by id').all());
});

test('a cached "select *" follows the schema: a column added here, or by another connection', async (t) => {
  const { db, raw, file } = open(t);
  raw.exec(`create table t (id integer primary key, name text); insert into t values (1, 'a')`);
  const all = async () => (await sql.raw('select * from t').execute(db)).rows;
  assert.deepEqual(await all(), [{ id: 1, name: 'a' }]);
  await sql`alter table t add column extra text default 'e'`.execute(db);
  assert.deepEqual(await all(), [{ id: 1, name: 'a', extra: 'e' }]);
  const other = new SQLite(file);
  other.exec(`alter table t add column more integer default 9`);
  other.close();
  assert.deepEqual(await all(), [{ id: 1, name: 'a', extra: 'e', more: 9 }]);
});

test('a locking transaction holds the write lock from its start: another process cannot write between its read and its write', async (t) => {
  const { db, raw, file } = open(t);
  raw.exec(`create table t (id integer primary key, n integer); insert into t values (1, 0)`);
  raw.pragma('journal_mode = WAL');
  const other = new SQLite(file, { timeout: 0 });
  t.after(() => other.close());
  let otherError: Error | null = null;
  await lockingTransaction(db, async (tx) => {
    const { rows } = await sql<{ n: number }>`select n from t where id = 1`.execute(tx);
    try {
      other.prepare('update t set n = n + 100 where id = 1').run();
    } catch (err) {
      otherError = err as Error;
    }
    // A deferred transaction (Kysely's db.transaction()) failed here ("database is locked", SQLITE_BUSY_SNAPSHOT, no wait).
    await sql`update t set n = ${rows[0].n + 1} where id = 1`.execute(tx);
  });
  assert.match(String(otherError), /database is locked/);
  assert.deepEqual(raw.prepare('select n from t where id = 1').get(), { n: 1 });
  other.prepare('update t set n = n + 100 where id = 1').run(); // the lock is released at commit
  assert.deepEqual(raw.prepare('select n from t where id = 1').get(), { n: 101 });
});
