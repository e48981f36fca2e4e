import type { Kysely, Selectable } from 'kysely';
import { displayPrefix } from '../../auth/credentials.js';
import { containsText } from '../../db/like.js';
import type { Database, PartnersTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import type { StoredIntegration } from '../../distribution/integrations/types.js';
import type { Partner } from './schemas.js';
import { maskHeaders } from './service.js';
import { parsePrice, shownDeal } from '../../distribution/prices.js';

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

/** The API form of a row: header values masked, no token. */
export function toPartner(row: PartnerRecord): Partner {
  const integration = storedIntegration(row);
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    countries: JSON.parse(row.countries),
    working_hours: row.working_hours ? JSON.parse(row.working_hours) : null,
    daily_cap: row.daily_cap === null ? null : Number(row.daily_cap),
    hourly_cap: row.hourly_cap === null ? null : Number(row.hourly_cap),
    total_cap: row.total_cap === null ? null : Number(row.total_cap),
    deal: row.deal === null ? null : shownDeal(parsePrice(row.deal)!),
    pause_after_failures: row.pause_after_failures === null ? null : Number(row.pause_after_failures),
    consecutive_failures: Number(row.consecutive_failures),
    integration: { ...integration, headers: maskHeaders(integration.headers) },
    postback_token_prefix: displayPrefix('lgp_', row.postback_token_id),
    created_at: row.created_at,
    updated_at: row.updated_at,
    archived_at: row.archived_at,
  };
}

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

export async function listPartners(db: Kysely<Database>, f: PartnerFilter) {
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
  const page = pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
  return { ...page, data: page.data.map(toPartner) };
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
