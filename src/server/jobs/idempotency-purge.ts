import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/**
 * Intake's Idempotency-Keys are kept `ttlMs` (24 hours); older ones are deleted
 * (modules/intake/service.ts) so the table holds about a day of intake: once per interval across
 * all processes. IDEMPOTENCY_PURGE_INTERVAL_MS (default hourly).
 */
export function idempotencyPurgeJob(
  db: DB,
  purge: (db: DB, olderThan: string) => Promise<unknown>,
  ttlMs: number,
  everyMs: number,
): Job {
  return {
    name: 'idempotency-purge',
    everyMs,
    run: () =>
      withLease(db, 'idempotency-purge', everyMs, () => purge(db, new Date(Date.now() - ttlMs).toISOString()), {
        keep: true,
      }),
  };
}
