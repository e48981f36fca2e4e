// The export worker thread (started by exporter.ts), shared by every export of one server
// process. It has its own database connection — on SQLite a read-only one to the same file (WAL
// lets it read beside the writer), on PostgreSQL a small pool of its own, one connection per
// concurrent export — so an export neither blocks the event loop (better-sqlite3 is synchronous,
// and formatting a million rows takes seconds) nor queues in front of intake and search on the
// server's connections. One thread for all exports, not one each: each thread costs memory, and
// on a small machine more threads only take more cores from the event loop.
//
// The main thread plans each export and compiles each page's statement (search-queries.ts,
// pageQuery); this thread runs it, puts the rows in page order and writes their CSV. So it loads
// a database driver and a lead's view only, no query builder and no schemas (test/layout.test.ts):
// every module here costs memory for as long as the thread lives (bench/RESULTS.md, issue 30 item 4).
//
// Protocol, any number of jobs at once, told apart by id:
//   main → worker  {type:'page', id, sql, parameters, header, contacts, column, order}
//   worker → main  {type:'chunk', id, data: Uint8Array, rows, last}   the buffer is transferred;
//                  last is the page's last row's sort key (null when it had none)
//                  {type:'error', id, message}
// The main thread asks for a page only when it has room for it (one page ahead of its client),
// so a slow client holds its job still. Pages of different jobs are run in the order asked for.
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import type { DatabaseConfig } from '../../db/database.js';
import { inPageOrder } from './page-order.js';
import { csvLines } from './page-rows.js';
import type { LeadRow, SortKey } from './search-queries.js';

export interface PageAsked {
  type: 'page';
  id: number;
  sql: string;
  parameters: readonly unknown[];
  /** The CSV's header line goes first (the export's first page). */
  header: boolean;
  contacts: boolean;
  /** The date column the page is ordered by, then id, in `order`. */
  column: string;
  order: 'asc' | 'desc';
}
export type ToWorker = PageAsked;
export type FromWorker =
  | { type: 'chunk'; id: number; data: Uint8Array; rows: number; last: SortKey | null }
  | { type: 'error'; id: number; message: string };

/** What the thread is given at its start. */
export interface ExportWorkerData {
  database: DatabaseConfig;
  maxJobs: number;
  /** The CSV's columns (the API's Lead schema's properties, in order). */
  columns: string[];
}

type Run = (sql: string, parameters: readonly unknown[]) => Promise<LeadRow[]>;

async function open(config: DatabaseConfig, maxJobs: number): Promise<Run> {
  if (config.engine === 'sqlite') {
    const sqlite = new SQLite(config.file, { readonly: true, fileMustExist: true });
    sqlite.pragma('busy_timeout = 5000');
    // An export asks for the same statement page after page (the first page's lacks the cursor).
    const prepared = new Map<string, SQLite.Statement>();
    return async (text, parameters) => {
      let statement = prepared.get(text);
      if (!statement) {
        if (prepared.size >= 16) prepared.clear();
        statement = sqlite.prepare(text);
        prepared.set(text, statement);
      }
      return statement.all(...parameters) as LeadRow[];
    };
  }
  // Only a PostgreSQL server loads its driver here.
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({
    connectionString: config.url,
    max: Math.max(1, maxJobs),
    idleTimeoutMillis: 10_000,
    application_name: 'leadgate-export',
    ...(config.schema ? { options: `-c search_path=${config.schema}` } : {}),
  });
  pool.on('error', () => {});
  return async (text, parameters) => (await pool.query(text, parameters as unknown[])).rows as LeadRow[];
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
const data = workerData as ExportWorkerData;
const run = open(data.database, data.maxJobs);
const header = data.columns.join(',') + '\r\n';
const encoder = new TextEncoder();

async function page(m: PageAsked) {
  try {
    const rows = inPageOrder(await (await run)(m.sql, m.parameters), m.column, m.order);
    const text = (m.header ? header : '') + csvLines(rows, data.columns, m.contacts);
    const bytes = encoder.encode(text);
    const end = rows[rows.length - 1] as unknown as Record<string, string> | undefined;
    const last = end ? { d: end[m.column], id: end.id } : null;
    port.postMessage({ type: 'chunk', id: m.id, data: bytes, rows: rows.length, last } satisfies FromWorker, [
      bytes.buffer,
    ]);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    port.postMessage({ type: 'error', id: m.id, message } satisfies FromWorker);
  }
}

port.on('message', (m: ToWorker) => void page(m));
