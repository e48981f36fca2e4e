import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, sql, PostgresAdapter, PostgresDialect, SqliteDialect, type LogEvent } from 'kysely';
import { BACKSTOP_PAGES, startCheckpointer, type Checkpointer } from './checkpointer.js';
import { observerSet, registerObservers } from './query-observers.js';
import { withStatementCache } from './sqlite-statements.js';
import type { Database } from './tables.js';
import { trackWrites, writeTracker } from './unavailable.js';

/** Which database: SQLite (a file) or PostgreSQL (a URL, optionally a schema of its own). From config.ts. */
export type DatabaseConfig = { engine: 'sqlite'; file: string } | { engine: 'postgres'; url: string; schema?: string };

export type DB = Kysely<Database>;
export type Engine = DatabaseConfig['engine'];

export interface OpenOptions {
  /** Sees every statement's SQL (tests use it to prove a path touches no database). */
  onQuery?: (sql: string) => void;
  /** SQLite: checkpoint the WAL on a worker thread (the server; see checkpointer.ts). */
  backgroundCheckpoints?: boolean;
}

/** The background checkpointer of a SQLite database opened with backgroundCheckpoints. */
const checkpointers = new WeakMap<DB, Checkpointer>();
export const checkpointerOf = (db: DB): Checkpointer | undefined => checkpointers.get(db);

/**
 * SQLite with a checkpointer: resolves once its thread has copied the WAL back into the file (or
 * after maxWaitMs); at once elsewhere. Bulk work awaits it between batches (db/checkpointer.ts
 * settle), so it never writes the WAL faster than it is copied back.
 */
export async function walSettle(db: DB, maxWaitMs: number): Promise<void> {
  await checkpointers.get(db)?.settle(maxWaitMs);
}

/** The longest walTruncate waits for the checkpointer's thread. */
const TRUNCATE_WAIT_MS = 10_000;

/**
 * SQLite: copies the whole WAL into the database file and truncates it to zero bytes (after an
 * erasure: the old pages' frames hold what was erased). false when a reader still needed the log
 * (it is then checkpointed later by the checkpointer); null on PostgreSQL.
 */
export async function walTruncate(db: DB): Promise<boolean | null> {
  if (isPostgres(db)) return null;
  // On the checkpointer's thread where there is one: here SQLite's busy handler would put the
  // event loop to sleep while the worker checkpoints (a retention run's stalled intake 3.8 s).
  const worker = checkpointers.get(db);
  if (worker) return worker.truncate(TRUNCATE_WAIT_MS);
  const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(TRUNCATE)`.execute(db);
  return rows[0]?.busy === 0;
}

export function openDatabase(config: DatabaseConfig, opts: OpenOptions = {}): DB {
  const { onQuery } = opts;
  // Every statement's outcome also feeds databaseStatus() (unavailable.ts): a write that failed
  // for an outage reason (disk full) is what /api/health reports.
  const tracker = writeTracker();
  const observers = observerSet(); // the metrics' query timings (query-observers.ts)
  const log = (e: LogEvent) => {
    tracker.log(e);
    onQuery?.(e.query.sql);
    for (const observe of observers) observe(e);
  };
  if (config.engine === 'sqlite') {
    fs.mkdirSync(path.dirname(config.file), { recursive: true });
    const sqlite = new SQLite(config.file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    // Deleted and overwritten content is zeroed, not left in free space and free pages, so an
    // erasure (modules/privacy) leaves no bytes of it once the WAL is checkpointed (walTruncate).
    sqlite.pragma('secure_delete = ON');
    let checkpointer: Checkpointer | null = null;
    if (opts.backgroundCheckpoints) {
      sqlite.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
      checkpointer = startCheckpointer(config.file, (message) =>
        console.error(`SQLite background checkpoint failed: ${message}`),
      );
    }
    const database = withStatementCache(sqlite, () => checkpointer?.stop());
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }), log });
    if (checkpointer) checkpointers.set(db, checkpointer);
    trackWrites(db, tracker.state, config.file);
    registerObservers(db, observers);
    return db;
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: 10,
    // A server that does not answer (a dropped network, not a refused connection) fails the
    // request as unavailable (503) after this, instead of holding it for the OS's TCP timeout;
    // also bounds the wait for a free pooled connection.
    connectionTimeoutMillis: 10_000,
    // Statements queued on one client go out without waiting for each answer (pipelined.ts):
    // intake sends its locks with its read, and its release with its insert. Kysely still sends
    // one statement at a time everywhere else, so nothing else changes.
    pipeline: true,
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {});
  // Nor a checked-out one (the pool listens only to idle clients): a server shutting down sends
  // 57P01 to every connection, also to one a transaction holds between two statements. Its next
  // query then fails ("not queryable": 503 unavailable) and the pool discards it on release.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    prepareWrites(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
  trackWrites(db, tracker.state);
  registerObservers(db, observers);
  return db;
}

// PostgreSQL parses and plans every unnamed statement anew, and lead intake and delivery send
// the same few statements lead after lead. A write seen twice gets a name, and each connection
// then prepares it once (pg keeps the names per connection); so does a read marked with
// PREPARED (point reads by key, whose plan never depends on the values). Other reads stay
// unnamed: a generic plan can suit one filter and not another. At most NAMED_MAX names, and
// none for bulk statements, so inserts of varying size cannot fill the backends' memory (or
// this process's) with statements used once.
const NAMED_MAX = 200;
/** Longer texts are bulk statements (many rows at once): never named, nor remembered. */
const MAX_TEXT = 4000;
const WRITE = /^(insert|update|delete|with "\w+" as \((insert|update|delete))\b/i;
/** Appended to a read that may be prepared on PostgreSQL (a comment: SQLite ignores it). */
export const PREPARED = '/* prepared */';
const seen = new Map<string, number>();
const names = new Map<string, string>();
function prepareWrites(client: pg.PoolClient) {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, ...rest: unknown[]) => {
    if (typeof text === 'string' && Array.isArray(values) && !rest.length) {
      let name = names.get(text);
      if (!name && names.size < NAMED_MAX && text.length <= MAX_TEXT && (WRITE.test(text) || text.endsWith(PREPARED))) {
        const n = (seen.get(text) ?? 0) + 1;
        if (n >= 2) {
          seen.delete(text);
          names.set(text, (name = `leadgate_${names.size}`));
        } else if (seen.size < 10_000) seen.set(text, n);
      }
      if (name) return query({ name, text, values });
    }
    return query(text, values, ...rest);
  };
}

/**
 * A transaction that takes SQLite's write lock when it begins (BEGIN IMMEDIATE), for work that
 * reads before it writes and may run in two processes at once (migrations; the report folds:
 * the server's job and demo-data). Kysely begins DEFERRED: such a transaction cannot take the lock after
 * another process wrote, and SQLite answers SQLITE_BUSY at once, without the busy_timeout wait.
 * Not every transaction's way: intake measured 5–15 % slower with all of them IMMEDIATE
 * (bench/RESULTS.md, issue 30 fifth step). PostgreSQL: a plain transaction.
 */
export async function lockingTransaction<T>(db: DB, work: (tx: DB) => Promise<T>): Promise<T> {
  if (isPostgres(db)) return db.transaction().execute(work);
  return db.connection().execute(async (conn) => {
    await sql.raw('begin immediate').execute(conn);
    try {
      const out = await work(conn);
      await sql.raw('commit').execute(conn);
      return out;
    } catch (err) {
      await sql.raw('rollback').execute(conn);
      throw err;
    }
  });
}

export const isPostgres = (db: Kysely<any>) => db.getExecutor().adapter instanceof PostgresAdapter;
