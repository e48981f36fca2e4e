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
const checkpoint = () => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage({ error: String(err && err.message || err) }); }
};
parentPort.on('message', (m) => {
  if (m === 'checkpoint') return checkpoint();
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
  /** Asks for a last checkpoint and ends the worker; does not wait for it. */
  stop(): void;
}

export function startCheckpointer(file: string, onError: (message: string) => void): Checkpointer {
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { file, module: createRequire(import.meta.url).resolve('better-sqlite3') },
  });
  let stopped = false;
  worker.on('message', (m: { error?: string }) => m.error && onError(m.error));
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
    stop: () => {
      stopped = true;
      worker.ref();
      worker.postMessage('stop');
    },
  };
}
