import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import { containsText } from '../../db/like.js';
import { partnerIdInScope } from '../../db/record-scope.js';
import type { DataScope } from '../../db/scope.js';
import type { Database, PartnersTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { integrationFromStore } from '../../distribution/integrations/index.js';
import type { StoredIntegration } from '../../distribution/integrations/types.js';

export type PartnerRow = Selectable<PartnersTable>;

// Every column but the postback token hash, which never leaves the database.
const partnerColumns = [
  'id',
  'name',
  'status',
  'countries',
  'working_hours',
  'daily_cap',
  'hourly_cap',
  'total_cap',
  'deal',
  'pause_after_failures',
  'consecutive_failures',
  'integration',
  'track_autologin',
  'autologin_single_use',
  'quality_rule',
  'postback_token_id',
  'created_at',
  'updated_at',
  'archived_at',
] as const;
export type PartnerRecord = Omit<PartnerRow, 'postback_token_hash'>;

export const storedIntegration = (row: Pick<PartnerRow, 'integration'>): StoredIntegration =>
  integrationFromStore(row.integration);

export const findPartner = (db: Kysely<Database>, id: string): Promise<PartnerRecord | undefined> =>
  db.selectFrom('partners').select(partnerColumns).where('id', '=', id).executeTakeFirst();

export interface PartnerFilter {
  limit: number;
  cursor?: string;
  status?: 'active' | 'paused';
  q?: string;
  include_archived: boolean;
  country?: string;
}

export const insertPartner = (db: Kysely<Database>, row: Insertable<PartnersTable>) =>
  db.insertInto('partners').values(row).execute();

export const patchPartner = (db: Kysely<Database>, id: string, patch: Updateable<PartnersTable>) =>
  db.updateTable('partners').set(patch).where('id', '=', id).execute();

/** One page of partner rows, oldest first. */
export async function partnerPage(db: Kysely<Database>, f: PartnerFilter, scope: DataScope) {
  const after = decodeCursor(f.cursor, ['id']);
  let q = db
    .selectFrom('partners')
    .select(partnerColumns)
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) q = q.where('id', '>', after.id);
  if (!f.include_archived) q = q.where('archived_at', 'is', null);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.q) q = q.where((eb) => containsText(eb.ref('name'), f.q!));
  const inScope = partnerIdInScope(scope, 'partners.id');
  if (inScope) q = q.where(inScope);
  // countries is a JSON array written by JSON.stringify (no spaces) and the code is [A-Z]{2}
  // (schema-checked), so a LIKE on '"DE"' is exact. Partners are few: no index needed.
  if (f.country) q = q.where((eb) => eb.or([eb('countries', '=', '[]'), eb('countries', 'like', `%"${f.country}"%`)]));
  return pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
}

/** Flows (not archived) that still route to the partner: their names, for a 409. */
export async function liveFlowsUsing(db: Kysely<Database>, partnerId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('flow_targets')
    .innerJoin('flows', 'flows.id', 'flow_targets.flow_id')
    .select(['flows.id', 'flows.name'])
    .where('flow_targets.partner_id', '=', partnerId)
    .where('flows.archived_at', 'is', null)
    .distinct()
    .orderBy('flows.id')
    .limit(5)
    .execute();
  return rows.map((r) => `"${r.name}" (${r.id})`);
}

/** Whether anything at all still refers to the partner (leads, attempts, archived flows). */
export async function partnerReferenced(db: Kysely<Database>, partnerId: string): Promise<boolean> {
  const probes = [
    db.selectFrom('leads').select('id').where('partner_id', '=', partnerId).limit(1),
    db.selectFrom('lead_attempts').select('id').where('partner_id', '=', partnerId).limit(1),
    db.selectFrom('flow_targets').select('id').where('partner_id', '=', partnerId).limit(1),
  ];
  for (const probe of probes) if (await probe.executeTakeFirst()) return true;
  return false;
}

/** The partners a health view covers: every one not archived, by name. */
export const healthPartners = (db: Kysely<Database>, scope: DataScope) => {
  let q = db
    .selectFrom('partners')
    .select(['id', 'name', 'status', 'consecutive_failures', 'daily_cap', 'hourly_cap', 'total_cap', 'working_hours'])
    .where('archived_at', 'is', null);
  const inScope = partnerIdInScope(scope, 'partners.id');
  if (inScope) q = q.where(inScope);
  return q.orderBy('name').orderBy('id').execute();
};

/**
 * A partner's calls from `from` on, counted by outcome (5xx apart): a range of the
 * lead_attempts_partner index (partner_id, requested_at), so only that day's calls are read.
 */
export const attemptCountsQuery = (db: Kysely<Database>, partnerId: string, from: string) =>
  db
    .selectFrom('lead_attempts')
    .select((eb) => [
      'outcome',
      sql<number>`case when coalesce(http_status, 0) >= 500 then 1 else 0 end`.as('server_error'),
      eb.fn.countAll<number>().as('n'),
    ])
    .where('partner_id', '=', partnerId)
    .where('requested_at', '>=', from)
    .groupBy(['outcome', 'server_error']);
export const attemptCounts = (db: Kysely<Database>, partnerId: string, from: string) =>
  attemptCountsQuery(db, partnerId, from).execute();

/** A partner's latest call (the same index, read backwards, one row). */
export const lastAttemptQuery = (db: Kysely<Database>, partnerId: string) =>
  db
    .selectFrom('lead_attempts')
    .select(['requested_at', 'outcome', 'http_status'])
    .where('partner_id', '=', partnerId)
    .orderBy('requested_at', 'desc')
    .limit(1);
export const lastAttempt = (db: Kysely<Database>, partnerId: string) =>
  lastAttemptQuery(db, partnerId).executeTakeFirst();
