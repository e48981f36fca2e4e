import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { containsText } from '../../db/like.js';
import type { Database, PartnersTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
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
  'postback_token_id',
  'created_at',
  'updated_at',
  'archived_at',
] as const;
export type PartnerRecord = Omit<PartnerRow, 'postback_token_hash'>;

export const storedIntegration = (row: Pick<PartnerRow, 'integration'>) =>
  JSON.parse(row.integration) as StoredIntegration;

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
export async function partnerPage(db: Kysely<Database>, f: PartnerFilter) {
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
