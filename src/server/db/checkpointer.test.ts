// The background checkpointer really moves the WAL into the database file, off the connection
// that writes: ~3 MB written (under SQLite's own 1,000-page autocheckpoint, so the writer never
// checkpoints by itself) reach the database file only when the worker is asked to checkpoint.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { sql } from 'kysely';
import { checkpointerOf, openDatabase } from './database.js';

async function writeAndMeasure(background: boolean): Promise<{ before: number; after: number }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-ckpt-'));
  const file = path.join(dir, 'x.db');
  const db = openDatabase({ engine: 'sqlite', file }, { backgroundCheckpoints: background });
  try {
    await sql`create table blobs (id integer primary key, v text not null)`.execute(db);
    const before = statSync(file).size;
    for (let i = 0; i < 30; i++) {
      await db.transaction().execute(async (tx) => {
        for (let k = 0; k < 25; k++) await sql`insert into blobs (v) values (${'x'.repeat(3900)})`.execute(tx);
      });
    }
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
    return { before, after: statSync(file).size };
  } finally {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
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
