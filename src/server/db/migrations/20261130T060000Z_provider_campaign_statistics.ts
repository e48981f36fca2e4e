import { sql, PostgresAdapter, type Kysely } from 'kysely';

// PostgreSQL's planner takes a lead's provider and campaign to be independent, but a campaign
// belongs to one provider: for a provider's leads of one of its campaigns it expected 193 rows
// where there were 10,167 (1,000,000 leads, 50 providers, bench/portal.ts), chose a bitmap scan of
// them all and a sort, 26 ms, where walking the campaign's newest leads takes 0.4 ms. Extended
// statistics tell it the dependency. SQLite has no such statistics and plans this well already.

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`create statistics leads_provider_campaign (dependencies) on traffic_provider_id, campaign_id from leads`.execute(
    db,
  );
  await sql`analyze leads`.execute(db);
}
