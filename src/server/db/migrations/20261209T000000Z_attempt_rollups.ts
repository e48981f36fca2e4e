import { sql, PostgresAdapter, type Kysely } from 'kysely';
import { ATTEMPT_FOLD_TRIGGERS } from '../triggers/attempt-folds.js';
import { installTrigger } from '../triggers/index.js';

// Issue 30: partner performance read every delivery attempt of its range and, for the provider
// grid, each attempt's lead (90 days at 10,000,000 leads: 2.3M attempts, over 10 s). It now reads
// folded buckets of them: attempt_stats_* (calls and tracked links by partner, the lead's traffic
// provider and origin) and attempt_reasons_* (refusal reasons as the report shows them, contacts
// already replaced by placeholders), by UTC hour ('YYYY-MM-DDTHH') and UTC day ('YYYY-MM-DD').
// Each bucket also holds a partner's rows over every provider, under traffic_provider_id '' (no
// provider has that id): a report that neither splits nor narrows by provider reads those alone,
// which the key (bucket, provider first) finds without reading the others.
// The fold job (modules/analytics/attempt-folds.ts) writes them for closed hours; a bucket is
// read from them only while its row in attempt_folds exists, and the triggers
// (db/triggers/attempt-folds.ts) take it away on any change there. Nothing is backfilled here:
// the job folds existing hours in the background, newest first, and until then the report reads
// those hours from the attempts as before.
//
// autologin_links_created: the job reads an hour's tracked links (the report scanned them all).

const MEASURES = ['attempts', 'accepted', 'rejected', 'failed', 'duration_sum', 'timed', 'links', 'opened'];

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const rowid = <T extends { modifyEnd(s: unknown): T }>(t: T) => (postgres ? t : t.modifyEnd(sql`without rowid`));
  for (const grain of ['hourly', 'daily']) {
    let stats = db.schema
      .createTable(`attempt_stats_${grain}`)
      .addColumn('bucket', 'text', (c) => c.notNull())
      .addColumn('partner_id', 'text', (c) => c.notNull())
      .addColumn('traffic_provider_id', 'text', (c) => c.notNull())
      .addColumn('origin', 'text', (c) => c.notNull());
    for (const m of MEASURES) stats = stats.addColumn(m, 'bigint', (c) => c.notNull());
    await rowid(
      stats.addPrimaryKeyConstraint(`attempt_stats_${grain}_pk`, ['bucket', 'traffic_provider_id', 'partner_id', 'origin']),
    ).execute();
    await rowid(
      db.schema
        .createTable(`attempt_reasons_${grain}`)
        .addColumn('bucket', 'text', (c) => c.notNull())
        .addColumn('partner_id', 'text', (c) => c.notNull())
        .addColumn('traffic_provider_id', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('n', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint(`attempt_reasons_${grain}_pk`, ['bucket', 'traffic_provider_id', 'partner_id', 'reason']),
    ).execute();
  }
  await db.schema
    .createTable('attempt_folds')
    .addColumn('bucket', 'text', (c) => c.primaryKey())
    .addColumn('folded_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('autologin_links_created').on('autologin_links').columns(['created_at']).execute();
  for (const trigger of ATTEMPT_FOLD_TRIGGERS) await installTrigger(db, trigger);
}
