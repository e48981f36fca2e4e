import type { Kysely } from 'kysely';

// The Leads table's sale-status picker lists the values in use (GET /api/leads/sale-statuses):
// with this index the distinct values are read from the index alone, not from every lead row,
// and the sale_status filter is an index look-up.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('leads_sale_status').on('leads').column('sale_status').execute();
}
