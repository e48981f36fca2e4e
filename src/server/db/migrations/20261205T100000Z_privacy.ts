import { sql, type Kysely } from 'kysely';

// Issue 29, item 4 (modules/privacy): erasure by email or phone and the log of who viewed
// contacts. An erased lead keeps its row (ids, dates, statuses and money stay true for analytics
// and the providers' hash-chained logs) with its contacts replaced and `erased_at` set. A receipt
// of each erasure holds the subject only masked. contact_views: one row per read of a lead's
// detail or an export with contacts unmasked, paged newest first (by operator, by lead).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').addColumn('erased_at', 'text').execute();
  await db.schema
    .createTable('privacy_erasures')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_by_email', 'text')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('counts', 'text', (c) => c.notNull())
    .addColumn('lead_ids', 'text', (c) => c.notNull())
    .execute();
  await sql`create index privacy_erasures_created on privacy_erasures (created_at, id)`.execute(db);
  await db.schema
    .createTable('contact_views')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('at', 'text', (c) => c.notNull())
    .addColumn('operator_id', 'text', (c) => c.notNull())
    .addColumn('operator_email', 'text', (c) => c.notNull())
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('ip', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('lead_id', 'text')
    .addColumn('export_filter', 'text')
    .execute();
  await sql`create index contact_views_at on contact_views (at, id)`.execute(db);
  await sql`create index contact_views_operator on contact_views (operator_id, at, id)`.execute(db);
  await sql`create index contact_views_lead on contact_views (lead_id, at, id)`.execute(db);
}
