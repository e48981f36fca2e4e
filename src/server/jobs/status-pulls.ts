import type { Job } from './scheduler.js';

/**
 * Partners' status pulls that are due (modules/status-pull/runner.ts), each partner's claimed by
 * one process under its own lease. STATUS_PULL_INTERVAL_MS (how often due pulls are looked for).
 */
export function statusPullsJob(puller: { runDue(): Promise<number>; close(): Promise<void> }, everyMs: number): Job {
  return { name: 'status-pulls', everyMs, runAtStart: false, run: () => puller.runDue(), drain: () => puller.close() };
}
