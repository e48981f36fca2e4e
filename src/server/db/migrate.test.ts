import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { forEachDatabase, POSTGRES_URL } from '../../../test/helpers.js';
import type { DatabaseConfig } from '../config.js';
import { openDatabase } from './database.js';
import { LATEST_MIGRATION, migrate } from './migrate.js';

forEachDatabase('migrations', (engine) => {
  test('several instances migrating one database all succeed (at once on PostgreSQL), and a rerun changes nothing', async (t) => {
    let config: DatabaseConfig;
    if (engine === 'postgres') {
      const schema = `m_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const admin = new pg.Client({ connectionString: POSTGRES_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
      t.after(async () => {
        await admin.query(`drop schema ${schema} cascade`);
        await admin.end();
      });
      config = { engine: 'postgres', url: POSTGRES_URL, schema };
    } else {
      const dir = mkdtempSync(join(tmpdir(), 'leadgate-migrate-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      config = { engine: 'sqlite', file: join(dir, 'db.sqlite') };
    }
    const dbs = [openDatabase(config), openDatabase(config), openDatabase(config)];
    t.after(() => Promise.all(dbs.map((db) => db.destroy())));

    // PostgreSQL: all at once, as instances starting together do. SQLite: one after another, since
    // better-sqlite3 is synchronous and one process's connections would wait on each other
    // inside a single thread (separate processes queue on the file lock instead).
    const results =
      engine === 'postgres' ? await Promise.all(dbs.map((db) => migrate(db))) : [await migrate(dbs[0]), await migrate(dbs[1]), await migrate(dbs[2])];
    for (const r of results) assert.equal(r.level, LATEST_MIGRATION);
    const rows = await dbs[0].selectFrom('schema_migrations' as any).selectAll().execute();
    assert.equal(new Set(rows.map((r: any) => r.name)).size, rows.length, 'each migration recorded once');
    assert.ok(rows.some((r: any) => r.name === LATEST_MIGRATION));
    assert.deepEqual(await migrate(dbs[1]), { level: LATEST_MIGRATION });
    assert.equal((await dbs[0].selectFrom('schema_migrations' as any).selectAll().execute()).length, rows.length);
    // The tables exist and are usable.
    assert.deepEqual(await dbs[2].selectFrom('operators').select('id').execute(), []);
  });
});
