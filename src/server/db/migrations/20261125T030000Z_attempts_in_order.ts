import type { Kysely } from 'kysely';

// A lead's attempts are read in their order (attempt, time, id): with the index in that order
// the read needs no sort (SQLite sorted them in a temporary b-tree on every lead read, most of
// the query's cost; bench/RESULTS.md, "Auth without a database read").
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('lead_attempts_lead').execute();
  await db.schema.createIndex('lead_attempts_lead').on('lead_attempts').columns(['lead_id', 'attempt_no', 'requested_at', 'id']).execute();
}
