import type { Job } from './scheduler.js';

/**
 * CSV imports (modules/imports/worker.ts): each tick works the dry runs and imports under way, a
 * chunk at a time, and deletes uploads never started after 24 h. IMPORT_INTERVAL_MS. Each import
 * is worked by one process at a time (a lease on its row).
 */
export function importsJob(worker: { tick(now: number, signal: AbortSignal): Promise<unknown> }, everyMs: number): Job {
  return { name: 'imports', everyMs, run: (signal) => worker.tick(Date.now(), signal) };
}
