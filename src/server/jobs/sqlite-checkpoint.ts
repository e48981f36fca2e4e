import type { Checkpointer } from '../db/checkpointer.js';
import type { Job } from './scheduler.js';

/**
 * SQLite's WAL copied into the database file on the checkpointer's own thread
 * (db/checkpointer.ts), so the event loop only writes the log. SQLITE_CHECKPOINT_INTERVAL_MS;
 * with the job off, SQLite checkpoints by itself past BACKSTOP_PAGES.
 */
export function sqliteCheckpointJob(checkpointer: Checkpointer, everyMs: number): Job {
  return { name: 'sqlite-checkpoint', everyMs, runAtStart: false, run: () => checkpointer.checkpoint() };
}
