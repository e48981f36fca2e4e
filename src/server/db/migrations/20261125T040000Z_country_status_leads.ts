import type { Kysely } from 'kysely';

// The Leads table's most common filter pair, a country and a status (the delivered leads of
// DE), newest first: one index range in page order, and its count (the first page's total)
// read from the index alone, where walking leads_country_created tested each lead's status in
// the table (17 ms for a 10,000-lead count at 200,000 leads; bench/RESULTS.md).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('leads_country_status_created').on('leads').columns(['country', 'status', 'created_at', 'id']).execute();
}
