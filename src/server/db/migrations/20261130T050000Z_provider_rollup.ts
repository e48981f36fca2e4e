import { sql, PostgresAdapter, type Kysely } from 'kysely';
import { dropTrigger, installTrigger } from '../triggers/index.js';
import { ROLLUP_TRIGGERS } from '../triggers/rollups.js';

// The providers' portal statistics by day, week and month (issue 27) read a provider's hours,
// not its leads: 90 days of one provider with 20,000 leads was a 20,000-row scan on every
// request (85 ms p95 on PostgreSQL at 1,000,000 leads, bench/RESULTS.md); its hours are at most
// 2,160 rows. lead_provider_stats_hourly (traffic_provider_id, hour) holds leads, delivered,
// FTDs and cost, kept exact by the rollup triggers (db/triggers/rollups.ts), reinstalled here.
//
// FTDs still in a provider's hold are taken back out at read time from the leads themselves,
// found by leads_provider_ftd: only leads with an FTD are in it (a few percent), so it costs
// intake nothing until a lead converts.

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let t = db.schema
    .createTable('lead_provider_stats_hourly')
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull())
    .addColumn('hour', 'text', (c) => c.notNull())
    .addColumn('n_leads', 'integer', (c) => c.notNull())
    .addColumn('n_delivered', 'integer', (c) => c.notNull())
    .addColumn('n_ftd', 'integer', (c) => c.notNull())
    .addColumn('cost_cents', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('lead_provider_stats_hourly_pk', ['traffic_provider_id', 'hour']);
  if (!postgres) t = t.modifyEnd(sql`without rowid`);
  await t.execute();
  if (postgres) await sql`alter table lead_provider_stats_hourly set (fillfactor = 80)`.execute(db);
  // The leads already there, then the triggers keep it (one transaction: migrations run in one).
  await sql`insert into lead_provider_stats_hourly
    select traffic_provider_id, substr(created_at, 1, 13),
      count(*), sum(case when status = 'delivered' then 1 else 0 end), count(ftd_at), sum(cost_cents)
    from leads group by traffic_provider_id, substr(created_at, 1, 13)`.execute(db);
  for (const trigger of ROLLUP_TRIGGERS) {
    await dropTrigger(db, trigger);
    await installTrigger(db, trigger);
  }
  await db.schema
    .createIndex('leads_provider_ftd')
    .on('leads')
    .columns(['traffic_provider_id', 'ftd_at', 'created_at', 'campaign_id', 'cost_cents'])
    .where('ftd_at', 'is not', null)
    .execute();
}
