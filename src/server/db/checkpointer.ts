import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

// SQLite in WAL mode copies the log back into the database file at checkpoints. Left to itself
// it does that inside a commit once the log passes 1,000 pages, on the connection's thread —
// for Leadgate the event loop — and a checkpoint with its fsync takes ~10 ms per 1,000 pages
// here: every ~30 leads one intake waited 10 ms for it. This worker thread checkpoints on its
// own connection instead (PASSIVE: it never blocks the writer), so the event loop only writes
// the log. The main connection keeps a high autocheckpoint as a backstop in case the worker
// falls behind or dies. The worker checkpoints when asked: the sqlite-checkpoint job
// (jobs/sqlite-checkpoint.ts) asks every SQLITE_CHECKPOINT_INTERVAL_MS.

const WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const checkpoint = (mode = 'PASSIVE') => {
  try { return db.pragma('wal_checkpoint(' + mode + ')')[0].busy === 0; }
  catch (err) { parentPort.postMessage({ error: String(err && err.message || err) }); return false; }
};
parentPort.on('message', (m) => {
  if (m === 'checkpoint') return checkpoint();
  if (m && m.settle !== undefined)
    return parentPort.postMessage({ settled: m.settle, done: checkpoint(m.truncate ? 'TRUNCATE' : 'PASSIVE') });
  if (m !== 'stop') return;
  checkpoint();
  db.close();
  parentPort.close();
});
`;

/** Pages in the log after which the main connection checkpoints by itself (the backstop). */
export const BACKSTOP_PAGES = 20_000;

export interface Checkpointer {
  /** Asks the worker for a PASSIVE checkpoint; does not wait for it. */
  checkpoint(): void;
  /**
   * Asks for a PASSIVE checkpoint and resolves once it is done (or after maxWaitMs). Bulk work
   * (the retention's batches) awaits it between batches, so it never writes the log faster than
   * the worker copies it back: a log left to grow (the purge writes tens of MB a second) made
   * intake's commits wait, for the backstop's checkpoint or for the pages of a flush they were
   * overwriting (bench/RESULTS.md "Retention at 1,000,000 leads").
   */
  settle(maxWaitMs: number): Promise<void>;
  /**
   * A TRUNCATE checkpoint on the worker (the whole WAL copied back, the file emptied: after an
   * erasure or a retention run), so the event loop never sleeps in SQLite's busy handler waiting
   * for it. Resolves true once done, false when a reader kept it from finishing or after maxWaitMs.
   */
  truncate(maxWaitMs: number): Promise<boolean>;
  /** Asks for a last checkpoint and ends the worker; does not wait for it. */
  stop(): void;
}

export function startCheckpointer(file: string, onError: (message: string) => void): Checkpointer {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { file, module: createRequire(import.meta.url).resolve('better-sqlite3') },
  });
  let stopped = false;
  const settling = new Map<number, (done: boolean) => void>();
  let nextSettle = 0;
  worker.on('message', (m: { error?: string; settled?: number; done?: boolean }) => {
    if (m.error) onError(m.error);
    if (m.settled !== undefined) settling.get(m.settled)?.(m.done === true);
  });
  const ask = (truncate: boolean, maxWaitMs: number) =>
    new Promise<boolean>((resolve) => {
      if (stopped) return resolve(false);
      const id = nextSettle++;
      const done = (ok: boolean) => {
        clearTimeout(timer);
        settling.delete(id);
        resolve(ok);
      };
      const timer = setTimeout(() => done(false), maxWaitMs);
      settling.set(id, done);
      worker.postMessage({ settle: id, truncate });
    });
  worker.on('error', (err) => onError(err.message));
  worker.unref(); // never keeps the process alive while it runs
  return {
    // Once stopped, the process waits for its last checkpoint (milliseconds): a process that
    // exits meanwhile terminates the worker inside SQLite, and when that checkpoint fails (its
    // disk full, its file gone) better-sqlite3 aborts the whole process making the error
    // ("FATAL ERROR: v8::ToLocalChecked Empty MaybeLocal", seen once in CI after the full-disk
    // tests).
    checkpoint: () => {
      if (!stopped) worker.postMessage('checkpoint');
    },
    settle: async (maxWaitMs) => void (await ask(false, maxWaitMs)),
    truncate: (maxWaitMs) => ask(true, maxWaitMs),
    stop: () => {
      stopped = true;
      worker.ref();
      worker.postMessage('stop');
    },
  };
}
