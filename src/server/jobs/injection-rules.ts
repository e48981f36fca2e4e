import type { Job } from './scheduler.js';

/**
 * Recurring re-injection rules (modules/injection-rules/runner.ts): each tick makes the job of
 * every rule whose occurrence is due. INJECTION_RULE_INTERVAL_MS. No lease: each occurrence's
 * run row, inserted with its job, makes one job however many processes tick.
 */
export function injectionRulesJob(
  runner: { tick(now: number, signal: AbortSignal): Promise<unknown> },
  everyMs: number,
): Job {
  return { name: 'injection-rules', everyMs, run: (signal) => runner.tick(Date.now(), signal) };
}
