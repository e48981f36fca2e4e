import { statfs } from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely, type LogEvent } from 'kysely';

// A database that cannot be reached or cannot write is an outage, not a bug: the request was
// fine and may succeed in a few seconds. This file is the one place that tells those errors
// apart (the HTTP error handler answers them 503 `unavailable` with Retry-After), and it
// remembers failed writes so that /api/health can report a database that answers reads but
// cannot write (a full disk).

/** Seconds a client is told to wait before retrying (Retry-After). */
export const RETRY_AFTER_S = 5;

// Node socket errors: the server is down, restarting, or the network between is.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'EAI_AGAIN',
]);
// node-postgres / pg-pool messages for a lost or never-made connection (they carry no code).
const PG_MESSAGES = [
  /^Connection terminated/, // "… unexpectedly", "… due to connection timeout"
  /^timeout exceeded when trying to connect/, // pg-pool: connectionTimeoutMillis
  /^Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable/,
];

/** Why `err` means "the database cannot be reached or cannot write", or null when it does not. */
export function unavailableReason(err: unknown, depth = 0): string | null {
  if (!err || typeof err !== 'object' || depth > 3) return null;
  const code = String((err as { code?: unknown }).code ?? '');
  const message = String((err as { message?: unknown }).message ?? '');
  if (NETWORK_CODES.has(code)) return `database connection failed (${code})`;
  // PostgreSQL SQLSTATEs: 08 connection exception, 53 insufficient resources (53100 disk full,
  // 53300 too many connections), 57P01-03 admin/crash shutdown and "cannot connect now" (starting
  // up or recovering), 25006 a read-only standby (after a failover).
  if (
    /^(08|53)[0-9A-Z]{3}$/.test(code) ||
    code === '57P01' ||
    code === '57P02' ||
    code === '57P03' ||
    code === '25006'
  ) {
    return `database unavailable (SQLSTATE ${code})`;
  }
  // SQLite (better-sqlite3 puts the extended result code in `code`): locked past busy_timeout,
  // disk or size limit full, I/O error, the file cannot be opened, or it is read-only.
  if (/^SQLITE_(BUSY|FULL|IOERR|CANTOPEN|READONLY)(_|$)/.test(code)) return `database cannot write (${code})`;
  if (PG_MESSAGES.some((re) => re.test(message))) return `database connection lost (${message})`;
  // Happy-eyeballs connects fail with an AggregateError of one error per address; drivers wrap.
  const inner = [...(err instanceof AggregateError ? err.errors : []), (err as { cause?: unknown }).cause];
  for (const e of inner) {
    const reason = unavailableReason(e, depth + 1);
    if (reason) return reason;
  }
  return null;
}

export const isUnavailable = (err: unknown) => unavailableReason(err) !== null;

interface WriteState {
  /** SQLite: the database file, whose filesystem's free space databaseStatus() checks. */
  file?: string;
  /** Set by a statement that failed for an outage reason; cleared by the next commit that succeeds. */
  failedAt: number | null;
  reason: string | null;
}

/**
 * How long a failed write alone keeps the database reported unwritable. Without traffic no write
 * can clear the mark, and a health check that keeps failing takes the instance out of its load
 * balancer, which then sends no traffic: the mark would outlive the outage for ever. After this,
 * health says ok again; if the disk is still full, the next write marks it again at once.
 */
export const WRITE_FAILURE_MEMORY_MS = 30_000;

const states = new WeakMap<Kysely<any>, WriteState>();
// Only a commit proves a write reached the disk: SQLite (WAL) fails a full disk at commit, and
// an autocommit statement that matched no row (the recovery sweep's) proves nothing.
const COMMIT = /^\s*commit\b/i;
// Only a failed write marks the database unwritable: a read that failed because the server went
// away says nothing once it is back (the probe's `select 1` reports reachability).
const WRITE = /^\s*(insert|update|delete|replace|commit)\b/i;

/**
 * A Kysely `log` function that records write outcomes for databaseStatus(); register the Kysely
 * instance it serves with trackWrites() once it exists.
 */
export function writeTracker(): { state: WriteState; log: (e: LogEvent) => void } {
  const state: WriteState = { failedAt: null, reason: null };
  return {
    state,
    log(e) {
      if (e.level === 'error') {
        const reason = WRITE.test(e.query.sql) ? unavailableReason(e.error) : null;
        if (reason) {
          state.failedAt = Date.now();
          state.reason = reason;
        }
      } else if (state.failedAt !== null && COMMIT.test(e.query.sql)) {
        state.failedAt = null;
        state.reason = null;
      }
    },
  };
}

export const trackWrites = (db: Kysely<any>, state: WriteState, sqliteFile?: string) => {
  state.file = sqliteFile;
  states.set(db, state);
};

/**
 * SQLite: below this much free space where the database lives, it is reported unwritable before
 * (and while) writes fail. On a full disk some small commits still succeed (the WAL reuses its own
 * space) and would clear the failed-write mark between two refused leads; the free space does not
 * flap. PostgreSQL reports a full disk itself (53100), which the mark records.
 */
export const LOW_DISK_BYTES = 1024 * 1024;

async function lowDisk(file: string): Promise<string | null> {
  try {
    const fs = await statfs(path.dirname(file));
    const free = fs.bavail * fs.bsize;
    return free < LOW_DISK_BYTES ? `disk full: ${Math.floor(free / 1024)} KiB free where the database lives` : null;
  } catch {
    return null; // not knowing is no outage; a failing write still marks it
  }
}

export interface DatabaseStatus {
  /** Reachable and not known to be failing writes. */
  ok: boolean;
  /** `select 1` answered (within PROBE_TIMEOUT_MS). */
  reachable: boolean;
  /** No write has failed for an outage reason since the last commit that succeeded (within WRITE_FAILURE_MEMORY_MS), and (SQLite) the disk has at least LOW_DISK_BYTES free. */
  writable: boolean;
  /** What is wrong, for a person; null when ok. */
  error: string | null;
  /** When the last write failed, ISO time; null when writes work. */
  last_write_failure_at: string | null;
}

const PROBE_TIMEOUT_MS = 3000;

/** For /api/health: can the database be reached, and can it write? One `select 1` (and a statfs on SQLite); writes nothing. */
export async function databaseStatus(db: Kysely<any>): Promise<DatabaseStatus> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(resolve, PROBE_TIMEOUT_MS, `database did not answer within ${PROBE_TIMEOUT_MS} ms`);
  });
  const probe = sql`select 1`.execute(db).then(
    () => null,
    (err: unknown) => unavailableReason(err) ?? `database error: ${(err as Error)?.message ?? String(err)}`,
  );
  const readError = await Promise.race([probe, timeout]).finally(() => clearTimeout(timer));
  const state = states.get(db);
  if (state?.failedAt != null && Date.now() - state.failedAt > WRITE_FAILURE_MEMORY_MS) {
    state.failedAt = null;
    state.reason = null;
  }
  const writeError =
    (state?.file ? await lowDisk(state.file) : null) ?? (state?.failedAt != null ? state.reason : null);
  return {
    ok: readError === null && writeError === null,
    reachable: readError === null,
    writable: writeError === null,
    error: readError ?? writeError,
    last_write_failure_at: state?.failedAt != null ? new Date(state.failedAt).toISOString() : null,
  };
}
