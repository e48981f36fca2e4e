// The background checkpointer really moves the WAL into the database file, off the connection
// that writes: ~3 MB written (under SQLite's own 1,000-page autocheckpoint, so the writer never
// checkpoints by itself) reach the database file only when the worker is asked to checkpoint.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkpointerOf, openDatabase, walSettle, walTruncate, type DB } from './database.js';

/**
 * A new database (with the checkpointer unless background is false) and `transactions` × `rows`
 * rows of ~4 KB written, then fn with the file's size before the writes.
 */
async function withWrittenDatabase(
  opts: { background?: boolean; transactions?: number; rows: number },
  fn: (db: DB, file: string, before: number) => Promise<void>,
) {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-ckpt-'));
  const file = path.join(dir, 'x.db');
  const db = openDatabase({ engine: 'sqlite', file }, { backgroundCheckpoints: opts.background ?? true });
  try {
    await sql`create table blobs (id integer primary key, v text not null)`.execute(db);
    const before = statSync(file).size;
    for (let i = 0; i < (opts.transactions ?? 1); i++)
      await db.transaction().execute(async (tx) => {
        for (let k = 0; k < opts.rows; k++) await sql`insert into blobs (v) values (${'x'.repeat(3900)})`.execute(tx);
      });
    await fn(db, file, before);
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function writeAndMeasure(background: boolean): Promise<{ before: number; after: number }> {
  let measured = { before: 0, after: 0 };
  await withWrittenDatabase({ background, transactions: 30, rows: 25 }, async (db, file, before) => {
    const deadline = Date.now() + 3000;
    // As the sqlite-checkpoint job does, every 50 ms.
    while (background && statSync(file).size <= before + 2_000_000 && Date.now() < deadline) {
      checkpointerOf(db)!.checkpoint();
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(checkpointerOf(db) !== undefined, background, 'a checkpointer only when asked for');
    if (!background) await new Promise((r) => setTimeout(r, 600));
    const rows = await sql<{ n: number }>`select count(*) as n from blobs`.execute(db);
    assert.equal(Number(rows.rows[0].n), 750, 'every row is readable');
    measured = { before, after: statSync(file).size };
  });
  return measured;
}

test('WAL checkpoints happen on the worker thread, not in the writer', async () => {
  const foreground = await writeAndMeasure(false);
  assert.ok(
    foreground.after < foreground.before + 1_000_000,
    `without the worker the data stays in the WAL (file ${foreground.after} bytes)`,
  );
  const background = await writeAndMeasure(true);
  assert.ok(
    background.after > background.before + 2_000_000,
    `the worker copied the WAL into the database file (${background.before} → ${background.after} bytes)`,
  );
});

test('walSettle resolves once the checkpointer has copied what was written into the database file', () =>
  withWrittenDatabase({ rows: 500 }, async (db, file, before) => {
    assert.ok(statSync(file).size < before + 1_000_000, 'the rows are in the WAL, not yet in the file');
    // No polling: the file has grown by the time settle() resolves (its timeout is far off).
    const t0 = Date.now();
    await walSettle(db, 30_000);
    assert.ok(Date.now() - t0 < 30_000, 'resolved by the checkpoint, not by its timeout');
    assert.ok(
      statSync(file).size > before + 1_900_000,
      `copied into the file (${before} → ${statSync(file).size} bytes)`,
    );
  }));

test('walTruncate runs on the worker where there is one: the WAL is copied back and emptied', () =>
  withWrittenDatabase({ rows: 200 }, async (db, file) => {
    assert.ok(statSync(`${file}-wal`).size > 700_000, 'the rows are in the WAL');
    assert.equal(await walTruncate(db), true);
    assert.equal(statSync(`${file}-wal`).size, 0, 'the WAL file is empty');
    const rows = await sql<{ n: number }>`select count(*) as n from blobs`.execute(db);
    assert.equal(Number(rows.rows[0].n), 200, 'every row is still there');
  }));
