// The export worker thread (started by exporter.ts), shared by every export of one server
// process. It has its own database connection — on SQLite a read-only one to the same file (WAL
// lets it read beside the writer), on PostgreSQL a small pool of its own, one connection per
// concurrent export — so an export neither blocks the event loop (better-sqlite3 is synchronous,
// and formatting a million rows takes seconds) nor queues in front of intake and search on the
// server's connections. One thread for all exports, not one each: each thread costs tens of MB,
// and on a small machine more threads only take more cores from the event loop.
//
// Protocol, any number of jobs at once, told apart by id:
//   main → worker  {type:'start', id, filter, contacts, chunk}   the first chunk is owed at once
//                  {type:'more', id}                            one more chunk is owed (a credit)
//                  {type:'cancel', id}                          the client went away: stop
//   worker → main  {type:'chunk', id, data: Uint8Array, rows}    the buffer is transferred, not copied
//                  {type:'end', id} | {type:'error', id, message}
// The worker posts a chunk only against a credit, and the main thread grants one only when its
// response stream wants more (the socket drained), so a slow client holds its job still. While it
// waits, the job has already read its next page: at most one page ahead. Jobs take turns page by
// page (each page read yields to the others).
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { DatabaseConfig } from '../../db/database.js';
import type { Database } from '../../db/tables.js';
import { csvHeader, csvRows } from './export.js';
import { findLeads, sortKeyOf, type SortKey } from './search-queries.js';
import type { LeadFilter } from './search.js';

export type ToWorker =
  | { type: 'start'; id: number; filter: LeadFilter; contacts: boolean; chunk: number }
  | { type: 'more'; id: number }
  | { type: 'cancel'; id: number };
export type FromWorker =
  | { type: 'chunk'; id: number; data: Uint8Array; rows: number }
  | { type: 'end'; id: number }
  | { type: 'error'; id: number; message: string };

function open(config: DatabaseConfig): Kysely<Database> {
  if (config.engine === 'sqlite') {
    const sqlite = new SQLite(config.file, { readonly: true, fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    return new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  }
  const pool = new pg.Pool({
    connectionString: config.url,
    max: Math.max(1, workerData.maxJobs as number),
    idleTimeoutMillis: 10_000,
    application_name: 'leadgate-export',
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  });
  pool.on('error', () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}

/**
 * An export is background work: on Linux this thread asks for a lower CPU priority (nice 10, its
 * thread id from /proc/thread-self), so that on a busy machine the event loop, intake and search
 * get the cores first. Elsewhere, or if refused, it runs at normal priority.
 */
function yieldCpu() {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, 10);
  } catch {
    // not Linux, or not allowed: no matter
  }
}
yieldCpu();

const port = parentPort!;
const db = open(workerData.database as DatabaseConfig);
const encoder = new TextEncoder();

interface Job {
  id: number;
  filter: LeadFilter;
  contacts: boolean;
  chunk: number;
  credits: number;
  cancelled: boolean;
  wake: (() => void) | null;
}
const jobs = new Map<number, Job>();

interface Page {
  text: string;
  rows: number;
  last: boolean;
  after: SortKey | null;
}

async function page(j: Job, after: SortKey | null, first: boolean): Promise<Page> {
  const rows = await findLeads(db, j.filter, after, j.chunk);
  const text = (first ? csvHeader() : '') + csvRows(rows, j.contacts);
  return {
    text,
    rows: rows.length,
    last: rows.length < j.chunk,
    after: rows.length ? sortKeyOf(j.filter, rows[rows.length - 1]) : after,
  };
}

/** Lets the other jobs (and this thread's message handling) run between two pages. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function run(j: Job) {
  try {
    let next = page(j, null, true);
    for (;;) {
      const p = await next;
      if (j.cancelled) return;
      await turn();
      // The next page is read while this one waits for its credit (one page ahead, no more).
      if (!p.last) next = page(j, p.after, false);
      next.catch(() => {}); // reported when awaited
      if (j.credits === 0) await new Promise<void>((resolve) => (j.wake = resolve));
      if (j.cancelled) return;
      j.credits--;
      if (p.text) {
        const data = encoder.encode(p.text);
        port.postMessage({ type: 'chunk', id: j.id, data, rows: p.rows } satisfies FromWorker, [data.buffer]);
      }
      if (p.last) break;
    }
    port.postMessage({ type: 'end', id: j.id } satisfies FromWorker);
  } catch (err) {
    if (!j.cancelled)
      port.postMessage({
        type: 'error',
        id: j.id,
        message: err instanceof Error ? err.message : String(err),
      } satisfies FromWorker);
  } finally {
    jobs.delete(j.id);
  }
}

function wake(j: Job) {
  const w = j.wake;
  j.wake = null;
  w?.();
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'start') {
    const j: Job = {
      id: m.id,
      filter: m.filter,
      contacts: m.contacts,
      chunk: m.chunk,
      credits: 1,
      cancelled: false,
      wake: null,
    };
    jobs.set(j.id, j);
    void run(j);
    return;
  }
  const j = jobs.get(m.id);
  if (!j) return;
  if (m.type === 'more') j.credits++;
  else j.cancelled = true;
  wake(j);
});
