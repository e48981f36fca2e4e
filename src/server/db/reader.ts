import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
} from 'kysely';
import type { DatabaseConfig, DB } from './database.js';
import type { Database } from './tables.js';

// Long reads off the event loop. On SQLite a statement runs on the thread that calls it, and the
// server has one connection: a report that read months of delivery attempts held intake, search
// and every other request for its seconds (partner performance at 10,000,000 leads: 1.5 s for
// 30 days, over 10 s for the 90-day grid; bench/RESULTS.md). The reader is a Kysely whose
// statements run on a worker thread over a read-only connection of its own (WAL lets it read
// beside the writer): started at its first read, stopped after a minute without one, reads
// queued on it one at a time. It runs reads only: a write or a transaction is refused.
// On PostgreSQL the server's pool is the reader (a statement never blocks the event loop).

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file, { readonly: true, fileMustExist: true });
db.pragma('busy_timeout = 5000');
parentPort.on('message', ({ id, sql, parameters }) => {
  try {
    const statement = db.prepare(sql);
    if (!statement.reader) throw Object.assign(new Error('the reader runs reads only'), { code: 'LEADGATE_NOT_A_READ' });
    parentPort.postMessage({ id, rows: statement.all(...parameters) });
  } catch (err) {
    parentPort.postMessage({ id, error: String((err && err.message) || err), code: err && err.code });
  }
});
`;

/** How long the reader's thread waits for another read before it ends. */
const IDLE_MS = 60_000;

interface Pending {
  resolve: (rows: unknown[]) => void;
  reject: (err: Error) => void;
}

const failure = (message: string, code?: string) => Object.assign(new Error(message), code ? { code } : {});

class WorkerDriver implements Driver {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly connection: DatabaseConnection = {
    executeQuery: <R>(q: CompiledQuery) => this.run(q) as Promise<QueryResult<R>>,
    streamQuery: () => {
      throw new Error('the reader does not stream');
    },
  };

  constructor(
    private readonly file: string,
    private readonly idleMs: number,
  ) {}

  async init() {}
  async acquireConnection() {
    return this.connection;
  }
  async releaseConnection() {}
  async beginTransaction(): Promise<void> {
    throw new Error('the reader runs no transactions');
  }
  async commitTransaction() {}
  async rollbackTransaction() {}

  async destroy() {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const worker = this.worker;
    this.worker = null;
    this.failAll(failure('the reader was closed'));
    if (worker) await worker.terminate();
  }

  /** Worker threads alive: 0 or 1. */
  get threads() {
    return this.worker ? 1 : 0;
  }

  private failAll(err: Error) {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  private thread(): Worker {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: { file: this.file, module: createRequire(import.meta.url).resolve('better-sqlite3') },
      // Rows of aggregates, a few MB at most: a small heap keeps the thread's memory small.
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    });
    worker.unref();
    worker.on('message', (m: { id: number; rows?: unknown[]; error?: string; code?: string }) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.error !== undefined) p.reject(failure(m.error, m.code));
      else p.resolve(m.rows!);
      this.idleWhenDone();
    });
    // A thread that dies (a file that cannot be opened, out of memory) fails what it was asked;
    // the next read starts another.
    const down = (err: Error) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.failAll(err);
    };
    worker.on('error', (err: Error & { code?: string }) => down(failure(err.message, err.code)));
    worker.on('exit', (code) => down(failure(`the reader's thread stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private idleWhenDone() {
    if (this.pending.size || !this.worker) return;
    this.idleTimer = setTimeout(() => {
      const worker = this.worker;
      this.worker = null;
      void worker?.terminate();
    }, this.idleMs);
    this.idleTimer.unref();
  }

  private run(q: CompiledQuery): Promise<QueryResult<unknown>> {
    const worker = this.thread();
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: (rows) => resolve({ rows }), reject });
      worker.postMessage({ id, sql: q.sql, parameters: q.parameters });
    });
  }
}

export interface Reader {
  /** Reads on the reader's connection (SQLite: its thread; PostgreSQL: the server's pool). */
  db: DB;
  /** SQLite: whether the reader's thread is running now. */
  readonly threads: number;
  close(): Promise<void>;
}

/** The reader beside the server's database `db`, made from the same configuration. */
export function openReader(
  db: DB,
  config: DatabaseConfig,
  opts: { idleMs?: number; onQuery?: (sql: string) => void } = {},
): Reader {
  if (config.engine === 'postgres') return { db, threads: 0, close: async () => {} };
  const driver = new WorkerDriver(config.file, opts.idleMs ?? IDLE_MS);
  const reader = new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => driver,
      createIntrospector: (k) => new SqliteIntrospector(k),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
    log: opts.onQuery ? (e) => opts.onQuery!(e.query.sql) : undefined,
  });
  return {
    db: reader,
    get threads() {
      return driver.threads;
    },
    close: () => reader.destroy(),
  };
}
