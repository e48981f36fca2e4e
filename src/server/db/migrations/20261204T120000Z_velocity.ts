import { sql, type Kysely } from 'kysely';

// Velocity flags (issue 29, item 2): a traffic provider may limit how many leads come from one
// IP, phone or email domain within a window. Intake counts the provider's earlier leads with the
// same value here (an index range, bounded by the limit) while holding a lock on the value, so
// two processes count exactly; a lead's keys are written with it, in the same statement. Only
// providers with a limit set write keys; keys past the longest window (7 days) are purged.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('traffic_providers')
    .addColumn('velocity_policy', 'text', (c) =>
      c.notNull().defaultTo(sql.lit('{"window_minutes":60,"ip":null,"phone":null,"email_domain":null}')),
    )
    .execute();
  await db.schema
    .createTable('lead_velocity')
    .addColumn('lead_id', 'text', (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull())
    // ip:<address> | phone:<E.164> | domain:<email domain>
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('lead_velocity_key')
    .on('lead_velocity')
    .columns(['traffic_provider_id', 'key', 'created_at'])
    .execute();
  await db.schema.createIndex('lead_velocity_lead').on('lead_velocity').columns(['lead_id']).execute();
  await db.schema.createIndex('lead_velocity_created').on('lead_velocity').columns(['created_at']).execute();
}
