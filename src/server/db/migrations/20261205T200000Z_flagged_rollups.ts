import { sql, type Kysely } from 'kysely';
import { dropTrigger, installTrigger } from '../triggers/index.js';
import { FLAGS_ROLLUP_TRIGGERS, ROLLUP_TRIGGERS } from '../triggers/rollups.js';

// Fraud flags counted in reports (issue 29, item 2): every hourly rollup by registration hour
// gains n_flagged, the leads with any fraud flag (leads.flags <> 0), kept by the rollup triggers
// (db/triggers/rollups.ts, reinstalled here, and leads_rollup_flags installed: a change of flags
// alone, which nothing makes today, is counted too). The FTD rollup counts FTDs only and gains
// nothing. lead_provider_stats_hourly gains it too (it counts leads by provider), though the
// providers' portal never reads it: flags are the operator's judgment.
//
// The backfill is one grouped statement per table, not a statement per row: the full rollup from
// the flagged leads (one scan of leads, each group applied to its rollup row by primary key), the
// other two from the full rollup's flagged rows. Rows without a flagged lead keep the default 0.
// A constant default: both engines add the column without rewriting the table.

const FULL_KEY = ['hour', 'country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];
const TABLES = ['lead_stats_hourly', 'lead_country_stats_hourly', 'lead_provider_stats_hourly'];

/** Sets `table`'s n_flagged from `source` (a grouped select naming its key columns and n), matched on `key`. */
const fill = (table: string, key: string[], source: string) =>
  sql.raw(
    `update ${table} as r set n_flagged = f.n from (${source}) as f where ${key.map((k) => `r.${k} = f.${k}`).join(' and ')}`,
  );

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of TABLES)
    await db.schema
      .alterTable(table)
      .addColumn('n_flagged', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

  // The rollups store a missing reference as '' (20261122T010000Z_analytics_rollup).
  const keyOfLead: Record<string, string> = {
    hour: 'substr(created_at, 1, 13)',
    country: 'country',
    traffic_provider_id: 'traffic_provider_id',
    partner_id: "coalesce(partner_id, '')",
    campaign_id: "coalesce(campaign_id, '')",
    flow_id: "coalesce(flow_id, '')",
  };
  await fill(
    'lead_stats_hourly',
    FULL_KEY,
    `select ${FULL_KEY.map((k) => `${keyOfLead[k]} as ${k}`).join(', ')}, count(*) as n from leads where flags <> 0 ` +
      `group by ${FULL_KEY.map((k) => keyOfLead[k]).join(', ')}`,
  ).execute(db);
  for (const [table, key] of [
    ['lead_country_stats_hourly', ['hour', 'country']],
    ['lead_provider_stats_hourly', ['traffic_provider_id', 'hour']],
  ] as const)
    await fill(
      table,
      [...key],
      `select ${key.join(', ')}, sum(n_flagged) as n from lead_stats_hourly where n_flagged <> 0 group by ${key.join(', ')}`,
    ).execute(db);

  for (const trigger of ROLLUP_TRIGGERS) {
    await dropTrigger(db, trigger);
    await installTrigger(db, trigger);
  }
  for (const trigger of FLAGS_ROLLUP_TRIGGERS) await installTrigger(db, trigger);
}
