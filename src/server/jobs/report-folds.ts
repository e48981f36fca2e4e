import type { DB } from '../db/database.js';
import { withLease } from './lease.js';
import type { Job } from './scheduler.js';

/** Longer than one run may take (its budget below). */
const LEASE_MS = 10 * 60_000;
/** A run stops starting folds after this; the next one goes on (a year of hours takes a few runs). */
const RUN_BUDGET_MS = 2 * 60_000;

export interface FoldWork {
  (db: DB, opts: { budgetMs: number; signal: AbortSignal }): Promise<unknown>;
}

/**
 * The reports' folds, one process at a time: closed hours of delivery attempts and tracked links
 * for partner performance (modules/analytics/attempt-folds.ts foldDue), then ended UTC days of
 * the leads report (lead-folds.ts foldLeadDays). REPORT_FOLD_INTERVAL_MS.
 */
export function reportFoldJob(db: DB, fold: FoldWork, everyMs: number): Job {
  return {
    name: 'report-folds',
    everyMs,
    run: (signal) => withLease(db, 'report-folds', LEASE_MS, () => fold(db, { budgetMs: RUN_BUDGET_MS, signal })),
  };
}
