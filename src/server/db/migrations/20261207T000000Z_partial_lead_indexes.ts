import { sql, type Kysely } from 'kysely';

// Issue 30: the lead indexes on a column a new lead leaves empty hold only the leads with a
// value. Every query they serve names a value (a date range, an id, a sale status: each implies
// "is not null", which both planners prove), so the plans stay; what changes is the writes: a
// new lead's insert no longer adds an entry to any of the five, and on PostgreSQL the delivery's
// update of the lead (its status changes, so a new row version with an entry in every index
// whose condition it meets) skips those it leaves empty: all five for a rejected lead, the FTD
// and import ones for a delivered lead. leads_sale_status gains (created_at, id): the Leads
// table's sale status filter in registration order reads a page of it instead of sorting every
// lead with that status (800,000 at 10,000,000 leads); its distinct values are read as before.
const PARTIAL: [name: string, columns: string, column: string][] = [
  ['leads_delivered', 'delivered_at, id', 'delivered_at'],
  ['leads_ftd', 'ftd_at, id', 'ftd_at'],
  ['leads_partner_lead_id', 'partner_id, partner_lead_id', 'partner_lead_id'],
  ['leads_sale_status', 'sale_status, created_at, id', 'sale_status'],
  ['leads_import', 'import_id', 'import_id'],
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const [name, columns, column] of PARTIAL) {
    await sql.raw(`drop index ${name}`).execute(db);
    await sql.raw(`create index ${name} on leads (${columns}) where ${column} is not null`).execute(db);
  }
}
