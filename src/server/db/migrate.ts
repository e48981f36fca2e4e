import { sql, type Kysely } from 'kysely';
import { isPostgres, lockingTransaction, type DB } from './database.js';
import * as foundation from './migrations/20261121T000000Z_foundation.js';
import * as resources from './migrations/20261122T003000Z_resources_and_leads.js';
import * as analyticsRollup from './migrations/20261122T010000Z_analytics_rollup.js';
import * as leadNameSearch from './migrations/20261122T020000Z_lead_name_search.js';
import * as distribution from './migrations/20261122T030000Z_distribution.js';
import * as duplicateLookup from './migrations/20261122T040000Z_duplicate_lookup.js';
import * as twoFactor from './migrations/20261122T050000Z_two_factor.js';
import * as saleStatusValues from './migrations/20261125T000000Z_sale_status_values.js';
import * as attemptReports from './migrations/20261125T010000Z_attempt_reports.js';
import * as authGeneration from './migrations/20261125T020000Z_auth_generation.js';
import * as attemptsInOrder from './migrations/20261125T030000Z_attempts_in_order.js';
import * as countryStatusLeads from './migrations/20261125T040000Z_country_status_leads.js';
import * as countryRollup from './migrations/20261125T050000Z_country_rollup.js';
import * as eventOutbox from './migrations/20261126T000000Z_event_outbox.js';
import * as routingRules from './migrations/20261126T100000Z_routing_rules.js';
import * as webhookOwner from './migrations/20261127T010000Z_webhook_owner.js';
import * as jobLeases from './migrations/20261128T000000Z_job_leases.js';
import * as statusPullPreview from './migrations/20261128T010000Z_status_pull_preview.js';
import * as postbackLeadIndex from './migrations/20261129T020000Z_postback_lead_index.js';
import * as providerPortal from './migrations/20261130T000000Z_provider_portal.js';
import * as providerLog from './migrations/20261130T010000Z_provider_log.js';
import * as roleScope from './migrations/20261130T020000Z_role_scope.js';
import * as portalIndexes from './migrations/20261130T030000Z_portal_indexes.js';
import * as portalSubIds from './migrations/20261130T040000Z_portal_sub_ids.js';
import * as providerRollup from './migrations/20261130T050000Z_provider_rollup.js';
import * as providerCampaignStatistics from './migrations/20261130T060000Z_provider_campaign_statistics.js';
import * as autologinLinks from './migrations/20261201T000000Z_autologin_links.js';
import * as injections from './migrations/20261202T000000Z_injections.js';
import * as injectionRules from './migrations/20261203T100000Z_injection_rules.js';
import * as imports from './migrations/20261203T110000Z_imports.js';
import * as blocklists from './migrations/20261204T100000Z_blocklists.js';
import * as leadFlags from './migrations/20261204T110000Z_lead_flags.js';
import * as velocity from './migrations/20261204T120000Z_velocity.js';
import * as blocklistShapes from './migrations/20261204T140000Z_blocklist_shapes.js';
import * as reviewQueue from './migrations/20261205T000000Z_review_queue.js';
import * as privacy from './migrations/20261205T100000Z_privacy.js';
import * as partnerQuality from './migrations/20261204T130000Z_partner_quality.js';
import * as flaggedRollups from './migrations/20261205T200000Z_flagged_rollups.js';
import * as retention from './migrations/20261206T000000Z_retention.js';
import * as partialLeadIndexes from './migrations/20261207T000000Z_partial_lead_indexes.js';
import * as rareMatchIndexes from './migrations/20261208T000000Z_rare_match_indexes.js';
import * as lastFirstNameIndex from './migrations/20261208T010000Z_last_first_name_index.js';
import * as attemptRollups from './migrations/20261209T000000Z_attempt_rollups.js';
import * as leadDailyRollup from './migrations/20261209T010000Z_lead_daily_rollup.js';
import * as triggerIfs from './migrations/20261210T000000Z_trigger_ifs.js';

interface Migration {
  up(db: Kysely<any>): Promise<void>;
}

// Listed here rather than read from the folder, so the same list works from src/ (tsx) and
// dist/ (compiled). Append new migrations; never edit or reorder landed ones.
const migrations: [string, Migration][] = [
  ['20261121T000000Z_foundation', foundation],
  ['20261122T003000Z_resources_and_leads', resources],
  ['20261122T010000Z_analytics_rollup', analyticsRollup],
  ['20261122T020000Z_lead_name_search', leadNameSearch],
  ['20261122T030000Z_distribution', distribution],
  ['20261122T040000Z_duplicate_lookup', duplicateLookup],
  ['20261122T050000Z_two_factor', twoFactor],
  ['20261125T000000Z_sale_status_values', saleStatusValues],
  ['20261125T010000Z_attempt_reports', attemptReports],
  ['20261125T020000Z_auth_generation', authGeneration],
  ['20261125T030000Z_attempts_in_order', attemptsInOrder],
  ['20261125T040000Z_country_status_leads', countryStatusLeads],
  ['20261125T050000Z_country_rollup', countryRollup],
  ['20261126T000000Z_event_outbox', eventOutbox],
  ['20261126T100000Z_routing_rules', routingRules],
  ['20261127T010000Z_webhook_owner', webhookOwner],
  ['20261128T000000Z_job_leases', jobLeases],
  ['20261128T010000Z_status_pull_preview', statusPullPreview],
  ['20261129T020000Z_postback_lead_index', postbackLeadIndex],
  ['20261130T000000Z_provider_portal', providerPortal],
  ['20261130T010000Z_provider_log', providerLog],
  ['20261130T020000Z_role_scope', roleScope],
  ['20261130T030000Z_portal_indexes', portalIndexes],
  ['20261130T040000Z_portal_sub_ids', portalSubIds],
  ['20261130T050000Z_provider_rollup', providerRollup],
  ['20261130T060000Z_provider_campaign_statistics', providerCampaignStatistics],
  ['20261201T000000Z_autologin_links', autologinLinks],
  ['20261202T000000Z_injections', injections],
  ['20261203T100000Z_injection_rules', injectionRules],
  ['20261203T110000Z_imports', imports],
  ['20261204T100000Z_blocklists', blocklists],
  ['20261204T110000Z_lead_flags', leadFlags],
  ['20261204T120000Z_velocity', velocity],
  ['20261204T130000Z_partner_quality', partnerQuality],
  ['20261204T140000Z_blocklist_shapes', blocklistShapes],
  ['20261205T000000Z_review_queue', reviewQueue],
  ['20261205T100000Z_privacy', privacy],
  ['20261205T200000Z_flagged_rollups', flaggedRollups],
  ['20261206T000000Z_retention', retention],
  ['20261207T000000Z_partial_lead_indexes', partialLeadIndexes],
  ['20261208T000000Z_rare_match_indexes', rareMatchIndexes],
  ['20261208T010000Z_last_first_name_index', lastFirstNameIndex],
  ['20261209T000000Z_attempt_rollups', attemptRollups],
  ['20261209T010000Z_lead_daily_rollup', leadDailyRollup],
  ['20261210T000000Z_trigger_ifs', triggerIfs],
];

/** The newest migration: what a fully migrated database reports as its level. */
export const LATEST_MIGRATION = migrations[migrations.length - 1][0];

/** Every migration this code knows, oldest first. */
export const MIGRATION_NAMES: readonly string[] = migrations.map(([name]) => name);

/**
 * The migrations this code needs that the database has not applied (readiness: /api/health).
 * Throws when schema_migrations cannot be read (e.g. a database never migrated).
 */
export async function missingMigrations(db: Kysely<any>): Promise<string[]> {
  const applied = new Set(
    (await db.selectFrom('schema_migrations').select('name').execute()).map((r: { name: string }) => r.name),
  );
  return MIGRATION_NAMES.filter((name) => !applied.has(name));
}

const MIGRATION_LOCK = 7_301_946; // any constant; the advisory lock several instances queue on

/**
 * Applies the migrations not yet recorded in schema_migrations, all in one transaction: a
 * failure leaves the database as it was. Instances that start together take turns (an advisory
 * lock on PostgreSQL, the write lock on SQLite); everything stays in the current schema.
 */
export async function migrate(db: DB, opts: { until?: string } = {}): Promise<{ level: string | null }> {
  const postgres = isPostgres(db);
  // SQLite: the write lock up front, so a second process waits its turn (busy_timeout) instead
  // of failing on a lock upgrade; PostgreSQL: an advisory lock the instances queue on.
  const applied = await lockingTransaction(db, async (conn) => {
    const tx = conn as unknown as Kysely<any>;
    if (postgres) await sql`select pg_advisory_xact_lock(${MIGRATION_LOCK})`.execute(tx);
    return applyPending(tx, opts.until);
  });
  return { level: migrations.filter(([name]) => applied.has(name)).at(-1)?.[0] ?? null };
}

/** `until`: stop after this migration (upgrade tests start from a database as an older release left it). */
async function applyPending(tx: Kysely<any>, until?: string): Promise<Set<string>> {
  if (until !== undefined && !MIGRATION_NAMES.includes(until)) throw new Error(`No migration ${until}`);
  await tx.schema
    .createTable('schema_migrations')
    .ifNotExists()
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('applied_at', 'text', (c) => c.notNull())
    .execute();
  const done = new Set<string>((await tx.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name));
  for (const [name, migration] of migrations) {
    if (!done.has(name)) {
      try {
        await migration.up(tx);
      } catch (err) {
        throw new Error(`Migration ${name} failed: ${(err as Error).message}`);
      }
      await tx.insertInto('schema_migrations').values({ name, applied_at: new Date().toISOString() }).execute();
      done.add(name);
    }
    if (name === until) break;
  }
  return done;
}
