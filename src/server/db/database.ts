import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, type LogEvent } from 'kysely';
import type { DatabaseConfig } from '../config.js';
import type { Database } from './tables.js';

export type DB = Kysely<Database>;
export type Engine = DatabaseConfig['engine'];

/** `onQuery` sees every statement's SQL (tests use it to prove a path touches no database). */
export function openDatabase(config: DatabaseConfig, onQuery?: (sql: string) => void): DB {
  const log = onQuery ? (e: LogEvent) => onQuery(e.query.sql) : undefined;
  if (config.engine === 'sqlite') {
    fs.mkdirSync(path.dirname(config.file), { recursive: true });
    const sqlite = new SQLite(config.file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }), log });
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: 10,
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
}

export const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;
