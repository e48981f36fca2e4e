import type { Kysely } from 'kysely';
import { parsePrice, shownPrice } from '../../distribution/prices.js';
import { isPostgres } from '../../db/database.js';
import type { Database } from '../../db/tables.js';

const campaignColumns = [
  'campaigns.id',
  'campaigns.name',
  'campaigns.status',
  'campaigns.traffic_provider_id',
  'traffic_providers.name as traffic_provider_name',
  'campaigns.flow_id',
  'flows.name as flow_name',
  'campaigns.countries',
  'campaigns.payout',
  'campaigns.created_at',
  'campaigns.updated_at',
  'campaigns.archived_at',
] as const;

/** Campaigns with the names of their provider and flow, for lists that show them. */
export const campaignsWithNames = (db: Kysely<Database>) =>
  db
    .selectFrom('campaigns')
    .innerJoin('traffic_providers', 'traffic_providers.id', 'campaigns.traffic_provider_id')
    .leftJoin('flows', 'flows.id', 'campaigns.flow_id')
    .select(campaignColumns);

type CampaignRow = Awaited<ReturnType<ReturnType<typeof campaignsWithNames>['execute']>>[number];

export const toCampaign = (r: CampaignRow) => {
  return {
    ...r,
    countries: JSON.parse(r.countries) as string[],
    payout: shownPrice(parsePrice(r.payout)!),
  };
};

export async function findCampaign(db: Kysely<Database>, id: string) {
  const row = await campaignsWithNames(db).where('campaigns.id', '=', id).executeTakeFirst();
  return row ? toCampaign(row) : undefined;
}

/** The stored row, locked until commit on PostgreSQL when `lock` (SQLite serializes writers). */
export async function findCampaignRow(db: Kysely<Database>, id: string, lock = false) {
  let q = db.selectFrom('campaigns').selectAll().where('id', '=', id);
  if (lock && isPostgres(db)) q = q.forUpdate();
  return q.executeTakeFirst();
}

/**
 * A provider or flow a campaign is about to point at. Shared-locked on PostgreSQL so it
 * cannot be archived or deleted before this transaction commits.
 */
export async function referenced(db: Kysely<Database>, table: 'traffic_providers' | 'flows', id: string) {
  let q = db.selectFrom(table).select(['id', 'archived_at']).where('id', '=', id);
  if (isPostgres(db)) q = q.forShare();
  return q.executeTakeFirst();
}

export const campaignHasLeads = async (db: Kysely<Database>, id: string) =>
  !!(await db.selectFrom('leads').select('id').where('campaign_id', '=', id).limit(1).executeTakeFirst());
