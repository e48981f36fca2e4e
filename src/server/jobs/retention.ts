import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/** Longer than one run may take (its budget, modules/privacy/retention-service.ts RUN_BUDGET_MS, is 5 minutes). */
const LEASE_MS = 15 * 60_000;

/**
 * The retention's run (modules/privacy/retention-service.ts runRetention: old leads deleted, old
 * contacts purged), one process at a time. RETENTION_INTERVAL_MS.
 */
export function retentionJob(db: DB, run: (db: DB) => Promise<unknown>, everyMs: number): Job {
  return {
    name: 'retention',
    everyMs,
    runAtStart: false,
    run: () => withLease(db, 'retention', LEASE_MS, () => run(db)),
  };
}
