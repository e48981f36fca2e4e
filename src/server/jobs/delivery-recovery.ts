import type { Job } from './scheduler.js';

/**
 * Leads left `pending` by a process that died: resumed or failed (distribution/recovery.ts).
 * DELIVERY_RECOVERY_INTERVAL_MS. The sweep takes each lead's lease itself, so every process may run it.
 */
export function deliveryRecoveryJob(runner: { sweep(): Promise<unknown> }, everyMs: number): Job {
  return { name: 'delivery-recovery', everyMs, run: () => runner.sweep() };
}
