import { defineTrigger } from './define.js';

// The leads report reads whole UTC days of lead_stats_hourly from lead_stats_daily, folded by
// modules/analytics/lead-folds.ts; a day is read from it only while its row in lead_stats_folds
// exists. These triggers keep that exact: any change to an hourly row of a folded day deletes the
// day's fold row and its daily rows, in the writer's transaction (the rollup triggers on leads
// write lead_stats_hourly, so this fires inside them). An unfolded day costs a writer one probe
// of lead_stats_folds.
// From 20261209T010000Z_lead_daily_rollup.
//
// PostgreSQL: every writer of a day's hourly rows holds a shared advisory lock on the day, and the
// fold the exclusive one, so a fold waits for the writers in flight and a writer that comes while
// it runs waits for it, then finds its fold row: a new hourly row (an imported lead with an old
// date) is no exception, as no row lock could cover it.

/** The advisory lock class of a lead day (the second key: hashtext of the day). */
export const LEAD_DAY_LOCK = 7302;

const day = (r: string) => `substr(${r}.hour, 1, 10)`;
const folded = (r: string) => `exists (select 1 from lead_stats_folds where day = ${day(r)})`;
const unfold = (r: string) => [
  `delete from lead_stats_folds where day = ${day(r)}`,
  `delete from lead_stats_daily where day = ${day(r)}`,
];

const unfolding = (name: string, event: string, r: 'new' | 'old') =>
  defineTrigger(name, 'lead_stats_hourly', event, (engine) =>
    engine === 'postgres'
      ? {
          when: null,
          body: [
            `perform pg_advisory_xact_lock_shared(${LEAD_DAY_LOCK}, hashtext(${day(r)}))`,
            `if not ${folded(r)} then return null; end if`,
            ...unfold(r),
          ],
        }
      : { when: folded(r), body: unfold(r) },
  );

export const LEAD_FOLD_TRIGGERS = [
  unfolding('lead_stats_fold_insert', 'insert', 'new'),
  // An upsert keeps its key: the new row's day is the old one's.
  unfolding('lead_stats_fold_update', 'update', 'new'),
  unfolding('lead_stats_fold_delete', 'delete', 'old'),
];
