import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/** Longer than one check takes; the lease is let go as soon as the check ends. */
const LEASE_MS = 10 * 60_000;

/**
 * Leads held for review longer than the quality settings' review_alert_minutes raise
 * review_queue.waiting (modules/quality/review-service.ts), checked by one process at a time.
 * REVIEW_ALERT_INTERVAL_MS.
 */
export function reviewAlertJob(db: DB, check: (db: DB) => Promise<number>, everyMs: number): Job {
  return {
    name: 'review-alert',
    everyMs,
    runAtStart: false,
    run: () => withLease(db, 'review-alert', LEASE_MS, () => check(db)),
  };
}
