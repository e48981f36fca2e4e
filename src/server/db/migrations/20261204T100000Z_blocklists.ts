import { sql, type Kysely } from 'kysely';

// Blocklists (issue 29, item 1): values a lead must not carry (an email, an email domain and its
// subdomains, a phone, an IP address or CIDR block, a sub id), for every traffic provider or
// one. `value` is the entry as shown (normalized); `match_key` is what intake compares: the
// lead's own keys (modules/quality/match-keys.ts) are looked up by it, so a check is a few index
// probes however long the list. One entry per key and scope (global, or one provider).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('blocklist_entries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // email | email_domain | phone | ip | sub_id
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('match_key', 'text', (c) => c.notNull())
    // null: every traffic provider's leads
    .addColumn('traffic_provider_id', 'text', (c) => c.references('traffic_providers.id').onDelete('cascade'))
    .addColumn('expires_at', 'text')
    .addColumn('note', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await sql`create unique index blocklist_entries_key on blocklist_entries (match_key, coalesce(traffic_provider_id, ''))`.execute(
    db,
  );
  await db.schema.createIndex('blocklist_entries_created').on('blocklist_entries').columns(['created_at', 'id']).execute();
  await db.schema
    .createIndex('blocklist_entries_provider')
    .on('blocklist_entries')
    .columns(['traffic_provider_id'])
    .execute();
}

