import { providerIdInScope } from '../../db/record-scope.js';
import type { DataScope } from '../../db/scope.js';
import type { Insertable, Kysely, Updateable } from 'kysely';
import { parsePrice, shownPrice } from '../../distribution/prices.js';
import { isPostgres } from '../../db/database.js';
import { containsText } from '../../db/like.js';
import type { CampaignsTable, Database } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';

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

export interface CampaignFilter {
  limit: number;
  cursor?: string;
  status?: 'active' | 'paused';
  q?: string;
  include_archived: boolean;
  traffic_provider_id?: string;
  flow_id?: string;
}

/** One page of campaigns, oldest first, in the API shape. */
export async function campaignPage(db: Kysely<Database>, f: CampaignFilter, scope: DataScope) {
  const after = decodeCursor(f.cursor, ['id']);
  let query = campaignsWithNames(db)
    .orderBy('campaigns.id')
    .limit(f.limit + 1);
  if (after) query = query.where('campaigns.id', '>', after.id);
  if (!f.include_archived) query = query.where('campaigns.archived_at', 'is', null);
  if (f.status) query = query.where('campaigns.status', '=', f.status);
  if (f.q) query = query.where((eb) => containsText(eb.ref('campaigns.name'), f.q!));
  if (f.traffic_provider_id) query = query.where('campaigns.traffic_provider_id', '=', f.traffic_provider_id);
  if (f.flow_id) query = query.where('campaigns.flow_id', '=', f.flow_id);
  const inScope = providerIdInScope(scope, 'campaigns.traffic_provider_id');
  if (inScope) query = query.where(inScope);
  const page = pageOf(await query.execute(), f.limit, (r) => ({ id: r.id }));
  return { ...page, data: page.data.map(toCampaign) };
}

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

export const insertCampaign = (db: Kysely<Database>, row: Insertable<CampaignsTable>) =>
  db.insertInto('campaigns').values(row).execute();

export const patchCampaign = (db: Kysely<Database>, id: string, patch: Updateable<CampaignsTable>) =>
  db.updateTable('campaigns').set(patch).where('id', '=', id).execute();
