import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/** Longer than one run can take; let go as soon as the run ends. */
const LEASE_MS = 5 * 60_000;
/** Checkpoints of every moved chain head, once per this across every process (the lease is kept). */
const CHECKPOINT_EVERY_MS = 3_600_000;

/**
 * Traffic providers' logs (modules/provider-log/chain.ts): due facts chained, one process at a
 * time (so no seq is written twice on a shared database), and every head that moved signed
 * hourly. PROVIDER_LOG_INTERVAL_MS.
 */
export function providerLogJob(
  db: DB,
  work: { chain: (db: DB) => Promise<number>; checkpointAll: (db: DB) => Promise<number> },
  everyMs: number,
  /** Tests play other processes with it (lease.ts). */
  holder?: string,
): Job {
  let checkpointedAt = -Infinity;
  return {
    name: 'provider-log',
    everyMs,
    runAtStart: true,
    run: async () => {
      await withLease(db, 'provider-log', LEASE_MS, () => work.chain(db), { holder });
      // Hourly here; the lease, kept for the hour, keeps the other processes out meanwhile.
      if (Date.now() - checkpointedAt < CHECKPOINT_EVERY_MS) return;
      checkpointedAt = Date.now();
      await withLease(db, 'provider-log-checkpoints', CHECKPOINT_EVERY_MS, () => work.checkpointAll(db), {
        keep: true,
        holder,
      });
    },
  };
}
