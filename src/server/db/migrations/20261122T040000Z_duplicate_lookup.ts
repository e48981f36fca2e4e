import type { Kysely } from 'kysely';

// Duplicate checks at intake look for an earlier lead with the same email (or phone) since a
// point in time, earliest first. With (email, created_at) the look-up is one range of one index
// in the order wanted; with email alone, SQLite (no statistics on a young database) preferred
// (traffic_provider_id, created_at) and read every lead of the provider in the window: ~200 µs
// per intake at 2,000 leads, growing with the table. The lead search's exact email/phone match
// uses the same indexes.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('leads_email').execute();
  await db.schema.dropIndex('leads_phone').execute();
  await db.schema.createIndex('leads_email_created').on('leads').columns(['email', 'created_at']).execute();
  await db.schema.createIndex('leads_phone_created').on('leads').columns(['phone', 'created_at']).execute();
}
