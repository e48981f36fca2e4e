import type { Job } from './scheduler.js';

/**
 * Re-injection jobs (modules/injections/worker.ts): each tick sends what every due job's pace
 * allows. INJECTION_INTERVAL_MS. Each job is worked by one process at a time (a lease on its row).
 */
export function injectionsJob(
  worker: { tick(now: number, signal: AbortSignal): Promise<unknown> },
  everyMs: number,
): Job {
  return { name: 'injections', everyMs, run: (signal) => worker.tick(Date.now(), signal) };
}
