import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/**
 * Old events and their delivery records are deleted (events/dispatcher.ts, purge): once per
 * interval across all processes. EVENT_PURGE_INTERVAL_MS (default: hourly where events are sent).
 */
export function eventPurgeJob(db: DB, events: { purge(): Promise<number> }, everyMs: number): Job {
  return {
    name: 'event-purge',
    everyMs,
    run: () => withLease(db, 'event-purge', everyMs, () => events.purge(), { keep: true }),
  };
}
