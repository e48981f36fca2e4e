import fs from 'node:fs';
import os from 'node:os';
import { sql } from 'kysely';
import type { MailSettings } from '../../config.js';
import { currentKeyId } from '../../secrets/box.js';
import { keyFileOf } from '../../secrets/keys.js';
import { isPostgres } from '../../db/database.js';
import { LATEST_MIGRATION } from '../../db/migrate.js';
import type { App } from '../../types.js';
import { VERSION } from '../../version.js';
import { readPublicBaseUrl } from './public-url.js';

export const PG_BACKUP_ADVICE =
  'This server stores its data in PostgreSQL, which Leadgate does not copy itself: a file copy of a running ' +
  'PostgreSQL is not a backup. Use pg_dump (e.g. `pg_dump --format=custom --file=leadgate.dump "$DATABASE_URL"`, ' +
  "restored with pg_restore) on a schedule, or your provider's managed backups and point-in-time recovery.";

const sqliteAdvice = (dir: string) =>
  `Backups are consistent copies of the SQLite database, written to ${dir} on this machine. ` +
  'Download them, or copy that folder elsewhere: a backup on the same disk does not survive the disk.';

// Backups carry the secrets sealed (secrets/): the key is not in them and must be kept beside them.
const keyAdvice = (app: App) =>
  app.config.secretKeys
    ? 'Partner secrets in it are sealed with the key in LEADGATE_SECRET_KEY, which no backup holds: keep that key with your backups, or a restored backup cannot use them.'
    : `Partner secrets in it are sealed with the key in ${keyFileOf(app.config)}, which no backup holds: keep a copy of that file with your backups, or a restored backup cannot use them.`;

const fileSize = async (file: string) => (await fs.promises.stat(file).catch(() => null))?.size ?? 0;

async function databaseFacts(app: App) {
  const db = app.db;
  // Names start with an ISO timestamp, so the greatest is the newest applied.
  const { rows: levels } = await sql<{
    level: string | null;
  }>`select max(name) as level from schema_migrations`.execute(db);
  const common = { migration_level: levels[0]?.level ?? null, latest_migration: LATEST_MIGRATION };
  if (isPostgres(db)) {
    const { rows } = await sql<{ size: string }>`select pg_database_size(current_database()) as size`.execute(db);
    return { engine: 'postgres' as const, size_bytes: Number(rows[0].size), ...common };
  }
  const cfg = app.config.database;
  const file = cfg.engine === 'sqlite' ? cfg.file : '';
  // Committed data may still be only in the write-ahead log: both files are the database.
  return { engine: 'sqlite' as const, size_bytes: (await fileSize(file)) + (await fileSize(`${file}-wal`)), ...common };
}

/** The mail server, as far as an operator may see it: no user name, no password. */
function mailFacts(mail: MailSettings | null) {
  if (!mail) return { configured: false, relay: null, security: null, from: null };
  const from = mail.from.name ? `${mail.from.name} <${mail.from.address}>` : mail.from.address;
  return { configured: true, relay: mail.display, security: mail.security, from };
}

/** Everything GET /api/hosting shows; all read now, nothing shelled out. */
export async function hostingStatus(app: App, backupFolder: string) {
  const now = Date.now();
  const mem = process.memoryUsage();
  const disk = await fs.promises.statfs(app.config.dataDir);
  const database = await databaseFacts(app);
  const sqlite = database.engine === 'sqlite';
  return {
    version: VERSION,
    build: app.config.buildCommit,
    started_at: new Date(app.startedAt).toISOString(),
    uptime_seconds: Math.floor((now - app.startedAt) / 1000),
    node_version: process.version,
    platform: `${process.platform} ${os.release()} (${process.arch})`,
    memory: { rss_bytes: mem.rss, heap_used_bytes: mem.heapUsed, heap_total_bytes: mem.heapTotal },
    load_average: os.loadavg(),
    cpu_count: os.availableParallelism(),
    disk: { path: app.config.dataDir, free_bytes: disk.bavail * disk.bsize, total_bytes: disk.blocks * disk.bsize },
    database,
    public_base_url: await readPublicBaseUrl(app.db),
    mail: mailFacts(app.config.mail),
    backups: {
      supported: sqlite,
      advice: `${sqlite ? sqliteAdvice(backupFolder) : PG_BACKUP_ADVICE} ${keyAdvice(app)}`,
    },
    secret_key: {
      source: app.config.secretKeys ? ('environment' as const) : ('file' as const),
      file: app.config.secretKeys ? null : keyFileOf(app.config),
      key_id: currentKeyId(),
    },
  };
}
