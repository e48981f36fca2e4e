import fs from 'node:fs';
import type { DatabaseConfig } from '../../db/database.js';
import type { DB } from '../../db/database.js';
import { conflict } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { audit, type Actor } from '../audit/service.js';
import { backupPath, listBackups, makeBackup } from './backups.js';
import { normalisePublicBaseUrl, readPublicBaseUrl, writePublicBaseUrl } from './public-url.js';
import { PG_BACKUP_ADVICE } from './status.js';

// The hosting panel's use cases: the public base URL, and the SQLite backups (admins only, as
// the routes declare). `dataDir` and the database config come from the server's config.

/** The SQLite file to back up; on PostgreSQL every backup use case answers 409 with the advice. */
const sqliteFile = (cfg: DatabaseConfig): string => (cfg.engine === 'sqlite' ? cfg.file : conflict(PG_BACKUP_ADVICE));

/** Sets (an origin) or clears the public base URL. */
export async function updatePublicUrl(db: DB, actor: Actor, raw: string | null) {
  const after = raw === null ? null : normalisePublicBaseUrl(raw);
  const before = await readPublicBaseUrl(db);
  await db.transaction().execute(async (tx) => {
    await writePublicBaseUrl(tx, after);
    await audit(tx, actor, { action: 'hosting.public_url_updated', details: { before, after } });
  });
  return { public_base_url: after };
}

/** The backups, newest first. */
export async function listBackupPage(cfg: DatabaseConfig, dataDir: string, query: { limit: number; cursor?: string }) {
  sqliteFile(cfg);
  const { limit, cursor } = query;
  const after = decodeCursor(cursor, ['name']);
  // Names hold the time, so newest first is by name, and the cursor is the last name shown.
  const newer = (await listBackups(dataDir)).filter((b) => !after || b.name < after.name);
  return pageOf(newer.slice(0, limit + 1), limit, (b) => ({ name: b.name }));
}

export async function createBackup(db: DB, actor: Actor, cfg: DatabaseConfig, dataDir: string) {
  const made = await makeBackup(sqliteFile(cfg), dataDir);
  await audit(db, actor, {
    action: 'hosting.backup_created',
    target_type: 'backup',
    target_id: made.name,
    details: { size_bytes: made.size_bytes },
  });
  return made;
}

/** The backup's file and size, for download (404 when there is none). */
export async function findBackup(cfg: DatabaseConfig, dataDir: string, name: string) {
  sqliteFile(cfg);
  return backupPath(dataDir, name);
}

export async function deleteBackup(db: DB, actor: Actor, cfg: DatabaseConfig, dataDir: string, name: string) {
  sqliteFile(cfg);
  const { file, size } = await backupPath(dataDir, name);
  await fs.promises.rm(file);
  await audit(db, actor, {
    action: 'hosting.backup_deleted',
    target_type: 'backup',
    target_id: name,
    details: { size_bytes: size },
  });
}
