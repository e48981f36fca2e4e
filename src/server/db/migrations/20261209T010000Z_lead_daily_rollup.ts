import { sql, PostgresAdapter, type Kysely } from 'kysely';
import { installTrigger } from '../triggers/index.js';
import { LEAD_FOLD_TRIGGERS } from '../triggers/lead-folds.js';

// Issue 30: a leads report grouped by partner, provider, campaign or flow read lead_stats_hourly
// over its range, which at 40 partners and 50 providers holds about one row per 1.7 leads (90 days
// at 10,000,000 leads: 540–1,265 ms). lead_stats_daily holds the same sums by UTC day (about one
// row per 10 leads at that size); the report reads it for the whole UTC days of a range that are
// folded (lead_stats_folds), and lead_stats_hourly for the rest. The fold job
// (modules/analytics/lead-folds.ts) folds each day once it has ended; the triggers
// (db/triggers/lead-folds.ts) unfold a day on any change to its hourly rows. Nothing is
// backfilled here: the job folds the existing days in the background, newest first.

const KEY = ['day', 'country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];
const MEASURES = [
  'n_leads',
  'n_delivered',
  'n_rejected',
  'n_duplicate',
  'n_failed',
  'n_ftd',
  'cost_cents',
  'revenue_cents',
  'revenue_no_ftd_cents',
  'n_flagged',
];

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let t = db.schema.createTable('lead_stats_daily');
  for (const k of KEY) t = t.addColumn(k, 'text', (c) => c.notNull());
  for (const m of MEASURES) t = t.addColumn(m, 'bigint', (c) => c.notNull());
  t = t.addPrimaryKeyConstraint('lead_stats_daily_pk', KEY as never[]);
  if (!postgres) t = t.modifyEnd(sql`without rowid`);
  await t.execute();
  await db.schema
    .createTable('lead_stats_folds')
    .addColumn('day', 'text', (c) => c.primaryKey())
    .addColumn('folded_at', 'text', (c) => c.notNull())
    .execute();
  for (const trigger of LEAD_FOLD_TRIGGERS) await installTrigger(db, trigger);
}
