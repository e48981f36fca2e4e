import type { Kysely } from 'kysely';

// The distribution engine's state (issue 4).
//
// leads.lease_until: while a lead is `pending`, the time until which one server process owns its
//   delivery. The owner pushes it forward before each partner call (call timeout + margin). A
//   pending lead whose lease has run out belongs to nobody (its process died): the recovery
//   sweep claims it and resumes it, or fails it when a partner call was in flight.
//
// cap_counters: leads accepted per partner (daily and total) and per flow target (daily).
//   A slot is reserved (used + 1 only while used < cap, one atomic UPDATE) before the partner is
//   called, and given back when the partner does not take the lead; so concurrent leads, in one
//   process or several, never overshoot a cap. period: 'total' or the local day 'YYYY-MM-DD'.
//
// intake_requests: Idempotency-Key → the lead the first request made, per traffic provider.
export async function up(db: Kysely<any>): Promise<void> {
  // No index of its own: the sweep reads pending leads through leads_status_created (few at any
  // time), and every index on leads costs every intake.
  await db.schema.alterTable('leads').addColumn('lease_until', 'text').execute();

  await db.schema
    .createTable('cap_counters')
    .addColumn('scope', 'text', (c) => c.notNull()) // 'partner:<id>' | 'target:<id>'
    .addColumn('period', 'text', (c) => c.notNull()) // 'total' | 'YYYY-MM-DD'
    .addColumn('used', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('cap_counters_pk', ['scope', 'period'])
    .execute();

  await db.schema
    .createTable('intake_requests')
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull().references('traffic_providers.id'))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull()) // SHA-256 of the canonical lead
    .addColumn('lead_id', 'text', (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('intake_requests_pk', ['traffic_provider_id', 'idempotency_key'])
    .execute();
  await db.schema.createIndex('intake_requests_created').on('intake_requests').column('created_at').execute();

  // Partner delete checks and per-partner attempt reports look attempts up by partner.
  await db.schema.createIndex('lead_attempts_partner').on('lead_attempts').columns(['partner_id', 'requested_at']).execute();
}
