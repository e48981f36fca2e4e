// The export worker thread (started by exporter.ts). It has its own database connection — on
// SQLite a read-only one to the same file (WAL lets it read beside the writer), on PostgreSQL one
// pooled connection of its own — so an export neither blocks the event loop (better-sqlite3 is
// synchronous, and formatting a million rows takes seconds) nor queues in front of intake and
// search on the server's connection.
//
// Protocol, one job at a time:
//   main → worker  {type:'start', id, filter, contacts, chunk}   the first chunk is owed at once
//                  {type:'more', id}                            one more chunk is owed (a credit)
//   worker → main  {type:'chunk', id, data: Uint8Array, rows}    the buffer is transferred, not copied
//                  {type:'end', id} | {type:'error', id, message}
// The worker posts a chunk only against a credit, and the main thread grants one only when its
// response stream wants more (the socket drained), so a slow client holds the worker still. While
// it waits, the worker has already read the next page: at most one page ahead.
// A client that disconnects gets the worker terminated (exporter.ts): nothing here needs to notice.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import type { DatabaseConfig } from '../../config.js';
import type { Database } from '../../db/tables.js';
import { csvHeader, csvRows } from './export.js';
import { findLeads, sortKeyOf, type SortKey } from './queries.js';
import type { LeadFilter } from './search.js';

export type ToWorker = { type: 'start'; id: number; filter: LeadFilter; contacts: boolean; chunk: number } | { type: 'more'; id: number };
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
    max: 1,
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
  wake: (() => void) | null;
}
let job: Job | null = null;

interface Page {
  text: string;
  rows: number;
  last: boolean;
  after: SortKey | null;
}

async function page(j: Job, after: SortKey | null, first: boolean): Promise<Page> {
  const rows = await findLeads(db, j.filter, after, j.chunk);
  const text = (first ? csvHeader() : '') + csvRows(rows, j.contacts);
  return { text, rows: rows.length, last: rows.length < j.chunk, after: rows.length ? sortKeyOf(j.filter, rows[rows.length - 1]) : after };
}

async function run(j: Job) {
  try {
    let next = page(j, null, true);
    for (;;) {
      const p = await next;
      // The next page is read while this one waits for its credit (one page ahead, no more).
      if (!p.last) next = page(j, p.after, false);
      next.catch(() => {}); // reported when awaited
      if (j.credits === 0) await new Promise<void>((resolve) => (j.wake = resolve));
      j.credits--;
      if (p.text) {
        const data = encoder.encode(p.text);
        port.postMessage({ type: 'chunk', id: j.id, data, rows: p.rows } satisfies FromWorker, [data.buffer]);
      }
      if (p.last) break;
    }
    port.postMessage({ type: 'end', id: j.id } satisfies FromWorker);
  } catch (err) {
    port.postMessage({ type: 'error', id: j.id, message: err instanceof Error ? err.message : String(err) } satisfies FromWorker);
  } finally {
    if (job === j) job = null;
  }
}

port.on('message', (m: ToWorker) => {
  if (m.type === 'start') {
    job = { id: m.id, filter: m.filter, contacts: m.contacts, chunk: m.chunk, credits: 1, wake: null };
    void run(job);
  } else if (m.type === 'more' && job?.id === m.id) {
    job.credits++;
    const wake = job.wake;
    job.wake = null;
    wake?.();
  }
});
