import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/** Longer than one check takes; the lease is let go as soon as the check ends. */
const LEASE_MS = 10 * 60_000;

/**
 * Traffic providers gone quiet raise traffic_provider.silent (modules/traffic-providers/silence.ts),
 * checked by one process at a time. PROVIDER_SILENCE_INTERVAL_MS.
 */
export function providerSilenceJob(db: DB, check: (db: DB) => Promise<number>, everyMs: number): Job {
  return {
    name: 'provider-silence',
    everyMs,
    runAtStart: false,
    run: () => withLease(db, 'provider-silence', LEASE_MS, () => check(db)),
  };
}
