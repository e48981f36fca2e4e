import type { Kysely } from 'kysely';

// Partners, traffic providers, flows (+ targets), campaigns, leads and delivery attempts.
// Portable types only. Timestamps: ISO 8601 UTC text. JSON: text. Money: integer cents.
// Configuration rows are archived (archived_at), not deleted, once leads refer to them.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('partners')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('countries', 'text', (c) => c.notNull()) // JSON ["DE", …]; [] = all
    .addColumn('working_hours', 'text') // JSON {timezone, days, from, to} or null
    .addColumn('daily_cap', 'integer')
    .addColumn('total_cap', 'integer')
    .addColumn('integration', 'text', (c) => c.notNull()) // JSON: method, url, headers, body_template, paths, timeout_ms
    .addColumn('postback_token_id', 'text', (c) => c.notNull().unique())
    .addColumn('postback_token_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'text')
    .execute();
  await db.schema.createIndex('partners_name').on('partners').column('name').execute();

  await db.schema
    .createTable('traffic_providers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_id', 'text', (c) => c.notNull().unique())
    .addColumn('token_hash', 'text', (c) => c.notNull())
    .addColumn('allowed_ips', 'text', (c) => c.notNull()) // JSON [cidr, …]; [] = any
    .addColumn('duplicate_policy', 'text', (c) => c.notNull()) // JSON
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'text')
    .execute();
  await db.schema.createIndex('traffic_providers_name').on('traffic_providers').column('name').execute();

  await db.schema
    .createTable('flows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'text')
    .execute();
  await db.schema.createIndex('flows_name').on('flows').column('name').execute();

  await db.schema
    .createTable('flow_targets')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('flow_id', 'text', (c) => c.notNull().references('flows.id').onDelete('cascade'))
    .addColumn('partner_id', 'text', (c) => c.notNull().references('partners.id'))
    .addColumn('position', 'integer', (c) => c.notNull()) // order in the editor
    .addColumn('priority', 'integer', (c) => c.notNull()) // lower is tried first
    .addColumn('weight', 'integer', (c) => c.notNull())
    .addColumn('daily_cap', 'integer')
    .addColumn('countries', 'text', (c) => c.notNull()) // JSON; [] = the partner's own
    .addColumn('schedule', 'text') // JSON working-hours override or null
    .execute();
  await db.schema.createIndex('flow_targets_flow').on('flow_targets').columns(['flow_id', 'position']).execute();
  await db.schema.createIndex('flow_targets_partner').on('flow_targets').column('partner_id').execute();

  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull().references('traffic_providers.id'))
    .addColumn('flow_id', 'text', (c) => c.references('flows.id'))
    .addColumn('countries', 'text', (c) => c.notNull()) // JSON; [] = all
    .addColumn('payout', 'text', (c) => c.notNull()) // JSON {model: cpl|cpa, amount_cents, currency}
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('archived_at', 'text')
    .execute();
  await db.schema.createIndex('campaigns_name').on('campaigns').column('name').execute();
  await db.schema.createIndex('campaigns_traffic_provider').on('campaigns').column('traffic_provider_id').execute();
  await db.schema.createIndex('campaigns_flow').on('campaigns').column('flow_id').execute();

  await db.schema
    .createTable('leads')
    .addColumn('id', 'text', (c) => c.primaryKey()) // UUIDv7: time-ordered
    .addColumn('created_at', 'text', (c) => c.notNull()) // registration time
    .addColumn('first_name', 'text', (c) => c.notNull())
    .addColumn('last_name', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull()) // lowercased
    .addColumn('phone', 'text', (c) => c.notNull()) // E.164
    .addColumn('country', 'text', (c) => c.notNull()) // ISO 3166-1 alpha-2
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('language', 'text')
    .addColumn('funnel', 'text')
    .addColumn('sub_id1', 'text')
    .addColumn('sub_id2', 'text')
    .addColumn('sub_id3', 'text')
    .addColumn('sub_id4', 'text')
    .addColumn('sub_id5', 'text')
    .addColumn('traffic_provider_id', 'text', (c) => c.notNull().references('traffic_providers.id'))
    .addColumn('campaign_id', 'text', (c) => c.references('campaigns.id'))
    .addColumn('flow_id', 'text', (c) => c.references('flows.id'))
    .addColumn('partner_id', 'text', (c) => c.references('partners.id'))
    .addColumn('status', 'text', (c) => c.notNull()) // new|pending|delivered|rejected|duplicate|failed
    .addColumn('reason', 'text') // why rejected/failed/duplicate
    .addColumn('partner_lead_id', 'text')
    .addColumn('sale_status', 'text')
    .addColumn('autologin_url', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('ftd_at', 'text')
    .addColumn('status_updated_at', 'text', (c) => c.notNull())
    .addColumn('cost_cents', 'integer', (c) => c.notNull().defaultTo(0)) // what we pay the provider
    .addColumn('revenue_cents', 'integer', (c) => c.notNull().defaultTo(0)) // what the partner pays us
    .execute();
  // Every Leads-table filter is backed by an index whose last columns are the sort key, so a
  // filtered, date-sorted page is an index range scan on both engines.
  const leadIndexes: [string, string[]][] = [
    ['leads_created', ['created_at', 'id']],
    ['leads_delivered', ['delivered_at', 'id']],
    ['leads_ftd', ['ftd_at', 'id']],
    ['leads_status_updated', ['status_updated_at', 'id']],
    ['leads_status_created', ['status', 'created_at', 'id']],
    ['leads_country_created', ['country', 'created_at', 'id']],
    ['leads_partner_created', ['partner_id', 'created_at', 'id']],
    ['leads_provider_created', ['traffic_provider_id', 'created_at', 'id']],
    ['leads_campaign_created', ['campaign_id', 'created_at', 'id']],
    ['leads_flow_created', ['flow_id', 'created_at', 'id']],
    ['leads_email', ['email']],
    ['leads_phone', ['phone']],
    ['leads_partner_lead_id', ['partner_id', 'partner_lead_id']],
  ];
  for (const [name, columns] of leadIndexes) await db.schema.createIndex(name).on('leads').columns(columns).execute();

  await db.schema
    .createTable('lead_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('lead_id', 'text', (c) => c.notNull().references('leads.id').onDelete('cascade'))
    .addColumn('partner_id', 'text', (c) => c.notNull().references('partners.id'))
    .addColumn('attempt_no', 'integer', (c) => c.notNull())
    .addColumn('requested_at', 'text', (c) => c.notNull())
    .addColumn('duration_ms', 'integer')
    .addColumn('http_status', 'integer')
    .addColumn('outcome', 'text', (c) => c.notNull()) // accepted|rejected|timeout|error
    .addColumn('reason', 'text')
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema.createIndex('lead_attempts_lead').on('lead_attempts').columns(['lead_id', 'attempt_no']).execute();
}
