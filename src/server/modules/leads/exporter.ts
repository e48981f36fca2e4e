// Lead exports off the event loop (issue 12). Each running export has a worker thread of its own
// (export-worker.ts) with its own database connection; the main thread only moves finished CSV
// chunks from the worker to the socket. Chunks come against credits: one is asked for only when
// the response stream wants more, so the socket's back-pressure reaches the worker and a slow
// client keeps at most a chunk or two in memory. A client that goes away gets its worker
// terminated, mid-query if need be.
//
// At most `limit` exports run at once per server instance (EXPORT_CONCURRENCY); the route answers
// 429 beyond that. Finished workers wait idle for the next export (starting one costs a module
// load) and end after IDLE_MS; they never keep the process alive.
import { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import type { DatabaseConfig } from '../../config.js';
import { EXPORT_CHUNK } from './export.js';
import type { FromWorker, ToWorker } from './export-worker.js';
import type { LeadFilter } from './search.js';

const IDLE_MS = 30_000;

// From src/ (tsx: tests, npm run dev) the worker is a .ts file and needs tsx's loader, which
// export-worker.dev.mjs registers first; from dist/ it is plain JavaScript.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_URL = new URL(FROM_SOURCE ? './export-worker.dev.mjs' : './export-worker.js', import.meta.url);

export class Exporter {
  private idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
  private readonly threads = new Set<Worker>();
  private running = 0;
  private seq = 0;
  /** Counters for tests and the benchmark. */
  readonly stats = { started: 0, finished: 0, cancelled: 0, failed: 0, bytesPosted: 0 };
  /** The exports running now, by id (in start order): bytes and rows their worker has sent. */
  readonly jobs = new Map<number, { bytes: number; rows: number }>();

  constructor(
    private readonly database: DatabaseConfig,
    readonly limit: number,
    private readonly idleMs = IDLE_MS,
  ) {}

  /** Exports running now. */
  get busy() {
    return this.running;
  }

  /** Worker threads alive (running or idle). */
  get threadCount() {
    return this.threads.size;
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL, {
      workerData: { database: this.database },
      // A page is a few MB at most; V8's default heap sizing let each worker grow by ~200 MB of
      // RSS during a long export. These limits keep it near 100 MB at the same speed (measured on
      // 1,000,000 leads: bench/RESULTS.md).
      resourceLimits: { maxOldGenerationSizeMb: 64, maxYoungGenerationSizeMb: 8 },
    });
    worker.unref();
    this.threads.add(worker);
    worker.once('exit', () => {
      this.threads.delete(worker);
      this.idle = this.idle.filter((i) => i.worker !== worker);
    });
    worker.on('error', () => {}); // a running job hears of it through its own listener
    return worker;
  }

  private take(): Worker {
    const idle = this.idle.pop();
    if (!idle) return this.spawn();
    clearTimeout(idle.timer);
    return idle.worker;
  }

  private giveBack(worker: Worker) {
    const timer = setTimeout(() => void worker.terminate(), this.idleMs);
    timer.unref();
    this.idle.push({ worker, timer });
  }

  /**
   * The CSV of `filter` as a byte stream, or null when `limit` exports already run. Resolves once
   * the first chunk is read (a failing query rejects before any answer has started).
   */
  open(filter: LeadFilter, contacts: boolean, chunk = EXPORT_CHUNK): Promise<Readable> | null {
    if (this.running >= this.limit) return null;
    this.running++;
    this.stats.started++;
    const worker = this.take();
    const id = ++this.seq;
    const progress = { bytes: 0, rows: 0 };
    this.jobs.set(id, progress);
    let state: 'starting' | 'streaming' | 'done' = 'starting';
    let owed = true; // 'start' asks for the first chunk
    let released = false;
    const release = (reuse: boolean) => {
      if (released) return;
      released = true;
      this.running--;
      this.jobs.delete(id);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (reuse) this.giveBack(worker);
      else void worker.terminate();
    };
    const post = (m: ToWorker) => worker.postMessage(m);

    let opened!: (s: Readable) => void;
    let refused!: (err: Error) => void;
    const result = new Promise<Readable>((resolve, reject) => ((opened = resolve), (refused = reject)));

    const stream = new Readable({
      highWaterMark: 64 * 1024,
      read() {
        if (state !== 'done' && !owed) {
          owed = true;
          post({ type: 'more', id });
        }
      },
      destroy: (err, cb) => {
        // The client went away (or the answer failed) before the end: stop the worker at once.
        if (state !== 'done') {
          state = 'done';
          this.stats.cancelled++;
          release(false);
        }
        cb(err);
      },
    });

    const fail = (err: Error, reuse: boolean) => {
      if (state === 'done') return;
      const before = state === 'starting';
      state = 'done';
      this.stats.failed++;
      release(reuse);
      if (before) refused(err);
      else stream.destroy(err);
    };
    const onMessage = (m: FromWorker) => {
      if (m.id !== id || state === 'done') return;
      if (m.type === 'chunk') {
        owed = false;
        this.stats.bytesPosted += m.data.byteLength;
        progress.bytes += m.data.byteLength;
        progress.rows += m.rows;
        const first = state === 'starting';
        state = 'streaming';
        stream.push(Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength));
        if (first) opened(stream);
      } else if (m.type === 'end') {
        const first = state === 'starting';
        state = 'done';
        this.stats.finished++;
        release(true);
        stream.push(null);
        if (first) opened(stream);
      } else fail(new Error(`lead export failed: ${m.message}`), true);
    };
    const onError = (err: Error) => fail(err, false);
    const onExit = (code: number) => fail(new Error(`the export worker stopped (exit code ${code})`), false);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    post({ type: 'start', id, filter, contacts, chunk });
    return result;
  }

  /** Ends every worker (server shutdown). */
  async close() {
    for (const i of this.idle) clearTimeout(i.timer);
    this.idle = [];
    await Promise.all([...this.threads].map((w) => w.terminate()));
  }
}

/** The exporter of each app, by its database handle (tests and the benchmark look at its counters). */
export const exporters = new WeakMap<object, Exporter>();
