import { type Kysely } from 'kysely';
import { installTrigger } from '../triggers/index.js';
import { PROVIDER_AUTH_GENERATION_TRIGGERS } from '../triggers/auth-generation.js';

// Traffic providers' own sign-in (issue 27): provider users (invited by an operator, tied to
// exactly one traffic provider), their sessions and their API keys, kept apart from the
// operators' tables so that no operator query can ever return a provider principal. Each
// provider says what its portal shows. Changes to any of them bump the auth generation like the
// operators' (auth/cache.ts), so a disabled provider user is refused on every instance at once.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('provider_users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull().references('traffic_providers.id'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text', (c) => c.notNull())
    // null until the invitation is accepted
    .addColumn('password_hash', 'text')
    .addColumn('status', 'text', (c) => c.notNull()) // invited | active | disabled
    .addColumn('invitation_hash', 'text')
    .addColumn('invitation_expires_at', 'text')
    .addColumn('timezone', 'text', (c) => c.notNull().defaultTo('UTC'))
    .addColumn('totp_secret', 'text')
    .addColumn('totp_pending_secret', 'text')
    .addColumn('totp_last_step', 'integer')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('last_login_at', 'text')
    .execute();
  await db.schema.createIndex('provider_users_invitation').on('provider_users').column('invitation_hash').execute();
  await db.schema
    .createIndex('provider_users_provider')
    .on('provider_users')
    .columns(['traffic_provider_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('provider_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull().references('traffic_providers.id'))
    // null for "View as provider" (viewer_operator_id set instead)
    .addColumn('provider_user_id', 'text', (c) => c.references('provider_users.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    // "View as provider": the operator reading the portal as this provider (read only); null: the user itself
    .addColumn('viewer_operator_id', 'text', (c) => c.references('operators.id').onDelete('cascade'))
    .execute();
  await db.schema.createIndex('provider_sessions_user').on('provider_sessions').column('provider_user_id').execute();

  await db.schema
    .createTable('provider_api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('provider_user_id', 'text', (c) => c.notNull().references('provider_users.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text')
    .addColumn('revoked_at', 'text')
    .addColumn('last_used_at', 'text')
    .execute();
  await db.schema
    .createIndex('provider_api_keys_user')
    .on('provider_api_keys')
    .columns(['provider_user_id', 'id'])
    .execute();

  // What the provider's portal shows (modules/traffic-providers/portal-settings.ts).
  for (const [column, type, dflt] of [
    ['portal_enabled', 'integer', 1],
    ['portal_sale_status', 'integer', 0],
    ['portal_payout', 'integer', 1],
    ['portal_contacts', 'integer', 0],
    ['ftd_hold_hours', 'integer', 0],
    ['sale_status_map', 'text', '{}'],
  ] as const) {
    await db.schema
      .alterTable('traffic_providers')
      .addColumn(column, type, (c) => c.notNull().defaultTo(dflt))
      .execute();
  }

  // Who did it: an operator, or a traffic provider's user (everything a provider user does is audited as one).
  await db.schema
    .alterTable('audit_log')
    .addColumn('actor_kind', 'text', (c) => c.notNull().defaultTo('operator'))
    .execute();

  for (const t of PROVIDER_AUTH_GENERATION_TRIGGERS) await installTrigger(db, t);
}
