// Lead exports off the event loop (issue 12). The exports of a server process run in one worker
// thread (export-worker.ts) with its own database connection. The main thread plans each export
// once and compiles each page's statement (a few hundred microseconds); the thread runs it and
// formats the page's CSV, and the main thread only moves finished chunks to the socket. A page is
// asked for only when the one before it went into the response stream, so the socket's
// back-pressure reaches the thread and a slow client keeps at most a chunk or two in memory. A
// client that goes away stops its job; when it was the only one, the thread is terminated,
// mid-query if need be.
//
// At most `limit` exports run at once per server instance (EXPORT_CONCURRENCY); the route answers
// 429 beyond that. The thread waits idle for the next export (starting one costs a module load)
// and ends after IDLE_MS; it never keeps the process alive.
import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { DatabaseConfig, DB } from '../../db/database.js';
import { EXPORT_CHUNK } from './export.js';
import type { ExportWorkerData, FromWorker, ToWorker } from './export-worker.js';
import { CSV_COLUMNS } from './schemas.js';
import { planOf, type Plan } from './search-plan.js';
import { pageQuery, type SortKey } from './search-queries.js';
import { DATE_COLUMNS, type LeadFilter } from './search.js';

const IDLE_MS = 30_000;

// From src/ (tsx: tests, npm run dev) the worker is a .ts file and needs tsx's loader, which
// export-worker.dev.mjs registers first; from dist/ it is plain JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './export-worker.dev.mjs' : './export-worker.js', import.meta.url);

interface Job {
  worker: Worker;
  message: (m: FromWorker) => void;
  fail: (err: Error) => void;
}

export class Exporter {
  private worker: Worker | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  private readonly running = new Map<number, Job>();
  private seq = 0;
  /** Counters for tests and the benchmark. */
  readonly stats = { started: 0, finished: 0, cancelled: 0, failed: 0, bytesPosted: 0 };
  /** The exports running now, by id (in start order): bytes and rows the worker has sent. */
  readonly jobs = new Map<number, { bytes: number; rows: number }>();

  constructor(
    private readonly db: DB,
    private readonly database: DatabaseConfig,
    readonly limit: number,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** Exports running now. */
  get busy() {
    return this.running.size;
  }

  /** Worker threads alive (running or idle): 0 or 1. */
  get threadCount() {
    return this.worker ? 1 : 0;
  }

  /** The export thread, started when there is none. */
  private thread(): Worker {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_URL, {
      workerData: {
        database: this.database,
        maxJobs: this.limit,
        columns: [...CSV_COLUMNS],
      } satisfies ExportWorkerData,
      // A page of 1,000 leads is well under a MB; V8's default heap sizing let a worker grow by
      // ~200 MB of RSS during a long export. The thread's modules take about 6 MB of heap; each
      // export may have a page in hand (on PostgreSQL all at once): 4 MB apiece. 8 MB in all ran
      // out of memory; 16–32 MB ran as fast (bench/RESULTS.md, issue 30 item 4).
      resourceLimits: { maxOldGenerationSizeMb: 16 + 4 * this.limit, maxYoungGenerationSizeMb: 2 },
    });
    worker.unref();
    worker.on('message', (m: FromWorker) => this.running.get(m.id)?.message(m));
    // A thread that dies fails the jobs it ran (and only those: a successor may already run others).
    const down = (err: Error) => {
      if (this.worker === worker) this.worker = null;
      for (const job of [...this.running.values()]) if (job.worker === worker) job.fail(err);
    };
    worker.on('error', down);
    worker.on('exit', (code) => down(new Error(`the export worker stopped (exit code ${code})`)));
    this.worker = worker;
    return worker;
  }

  private stopThread(worker: Worker) {
    if (this.worker === worker) this.worker = null;
    void worker.terminate();
  }

  /** Called as a job ends: an idle thread ends after idleMs. */
  private idleLater(worker: Worker) {
    if (this.worker !== worker || [...this.running.values()].some((j) => j.worker === worker)) return;
    this.idleTimer = setTimeout(() => this.stopThread(worker), this.idleMs);
    this.idleTimer.unref();
  }

  /**
   * The CSV of `filter` as a byte stream, or null when `limit` exports already run. Resolves once
   * the first chunk is read (a failing query rejects before any answer has started).
   */
  open(filter: LeadFilter, contacts: boolean, chunk = EXPORT_CHUNK): Promise<Readable> | null {
    if (this.running.size >= this.limit) return null;
    this.stats.started++;
    const worker = this.thread();
    const id = ++this.seq;
    const progress = { bytes: 0, rows: 0 };
    this.jobs.set(id, progress);
    let state: 'starting' | 'streaming' | 'done' = 'starting';
    /** Ends this job here; `cancel` also stops the thread when it ran nothing else (mid-query if need be). */
    const release = (cancel: boolean) => {
      if (!this.running.delete(id)) return;
      this.jobs.delete(id);
      if (cancel && ![...this.running.values()].some((j) => j.worker === worker)) this.stopThread(worker);
      else this.idleLater(worker);
    };

    let opened!: (s: Readable) => void;
    let refused!: (err: Error) => void;
    const result = new Promise<Readable>((resolve, reject) => ((opened = resolve), (refused = reject)));

    // One page ahead of the client, no more: a page is asked for when the one before it went into
    // the stream, and a page that comes while the stream is full waits here (`held`) until the
    // stream wants more, so the socket's back-pressure reaches the thread.
    const column = DATE_COLUMNS[filter.dateType];
    let plan: Plan | null = null;
    let after: SortKey | null = null;
    let asking = false;
    let lastPage = false;
    let wants = false;
    let held: Buffer | null = null;
    const ask = () => {
      if (asking || lastPage || state === 'done' || !plan) return;
      asking = true;
      try {
        const { sql, parameters } = pageQuery(this.db, filter, after, chunk, plan);
        const m: ToWorker = {
          type: 'page',
          id,
          sql,
          parameters,
          header: !after,
          contacts,
          column,
          order: filter.order,
        };
        worker.postMessage(m);
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      }
    };
    const finish = () => {
      state = 'done';
      this.stats.finished++;
      release(false);
      stream.push(null);
    };
    const flush = () => {
      if (!held || !wants || state === 'done') return;
      const data = held;
      held = null;
      wants = false;
      if (data.byteLength) stream.push(data);
      if (lastPage) finish();
      else ask();
    };

    const stream = new Readable({
      highWaterMark: 64 * 1024,
      read() {
        wants = true;
        flush();
      },
      destroy: (err, cb) => {
        // The client went away (or the answer failed) before the end: stop the job at once.
        if (state !== 'done') {
          state = 'done';
          this.stats.cancelled++;
          release(true);
        }
        cb(err);
      },
    });

    const fail = (err: Error) => {
      if (state === 'done') return;
      const before = state === 'starting';
      state = 'done';
      this.stats.failed++;
      release(false);
      if (before) refused(err);
      else stream.destroy(err);
    };
    const message = (m: FromWorker) => {
      if (state === 'done') return;
      if (m.type === 'error') return fail(new Error(`lead export failed: ${m.message}`));
      asking = false;
      this.stats.bytesPosted += m.data.byteLength;
      progress.bytes += m.data.byteLength;
      progress.rows += m.rows;
      lastPage = m.rows < chunk;
      after = m.last ?? after;
      held = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
      if (state === 'starting') {
        state = 'streaming';
        opened(stream);
      }
      flush();
    };
    this.running.set(id, { worker, message, fail });
    // Planned once for the whole export (planning may read the database: a name's or a sub id's spread).
    planOf(this.db, filter, 'page').then(
      (p) => {
        plan = p;
        ask();
      },
      (err: unknown) => fail(err instanceof Error ? err : new Error(String(err))),
    );
    return result;
  }

  /** Ends the thread (server shutdown). */
  async close() {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
  }
}

/** The exporter of each app, by its database handle (tests and the benchmark look at its counters). */
export const exporters = new WeakMap<object, Exporter>();
