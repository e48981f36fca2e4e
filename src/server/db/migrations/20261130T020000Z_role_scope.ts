import type { Kysely } from 'kysely';

// Operators scoped to their accounts (issue 27 item 5): a role may be limited to some traffic
// providers and/or partners. JSON arrays of ids; null: all of them. The built-in admin role is
// never scoped. Role updates already bump the auth generation, so a narrowed role applies at once.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('roles').addColumn('scope_traffic_provider_ids', 'text').execute();
  await db.schema.alterTable('roles').addColumn('scope_partner_ids', 'text').execute();
}
