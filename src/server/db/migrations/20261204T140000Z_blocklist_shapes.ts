import { type Kysely } from 'kysely';

// What the blocklists hold, by shape: each kind, and each IP family and prefix length
// ('ip4/24'), with how many entries have it (kept in the transaction that adds or removes
// entries). Intake builds only the keys of shapes that exist (modules/quality/blocklist-shapes.ts):
// a lead's 33 IPv4 keys become the one or two prefix lengths in use, none while the lists are
// empty (bench/RESULTS.md, "Lead quality checks").

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('blocklist_shapes')
    .addColumn('shape', 'text', (c) => c.primaryKey())
    .addColumn('entries', 'integer', (c) => c.notNull())
    .execute();
}
