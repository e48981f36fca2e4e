import { shownReviewRule } from '../quality/review-rule.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import { providerIdInScope } from '../../db/record-scope.js';
import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { displayPrefix } from '../../auth/credentials.js';
import { containsText } from '../../db/like.js';
import type { Database, TrafficProvidersTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import type { TrafficProvider } from './schemas.js';

// Every column but the token hash, which never leaves the database.
const providerColumns = [
  'id',
  'name',
  'status',
  'token_id',
  'allowed_ips',
  'duplicate_policy',
  'velocity_policy',
  'review_rule',
  'silent_after_hours',
  'created_at',
  'updated_at',
  'archived_at',
] as const;
export type ProviderRecord = Pick<Selectable<TrafficProvidersTable>, (typeof providerColumns)[number]>;

export const toTrafficProvider = (row: ProviderRecord): TrafficProvider => ({
  id: row.id,
  name: row.name,
  status: row.status,
  allowed_ips: JSON.parse(row.allowed_ips),
  duplicate_policy: JSON.parse(row.duplicate_policy),
  velocity: JSON.parse(row.velocity_policy),
  review: shownReviewRule(row.review_rule),
  silent_after_hours: row.silent_after_hours === null ? null : Number(row.silent_after_hours),
  token_prefix: displayPrefix('lgt_', row.token_id),
  created_at: row.created_at,
  updated_at: row.updated_at,
  archived_at: row.archived_at,
});

export const findTrafficProvider = (db: Kysely<Database>, id: string): Promise<ProviderRecord | undefined> =>
  db.selectFrom('traffic_providers').select(providerColumns).where('id', '=', id).executeTakeFirst();

export const insertTrafficProvider = (db: Kysely<Database>, row: Insertable<TrafficProvidersTable>) =>
  db.insertInto('traffic_providers').values(row).execute();

export const patchTrafficProvider = (db: Kysely<Database>, id: string, patch: Updateable<TrafficProvidersTable>) =>
  db.updateTable('traffic_providers').set(patch).where('id', '=', id).execute();

/** One page of providers, oldest first, in the API shape. */
export async function trafficProviderPage(
  db: Kysely<Database>,
  f: { limit: number; cursor?: string; status?: 'active' | 'paused'; q?: string; include_archived: boolean },
  scope: DataScope,
) {
  const after = decodeCursor(f.cursor, ['id']);
  let q = db
    .selectFrom('traffic_providers')
    .select(providerColumns)
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) q = q.where('id', '>', after.id);
  if (!f.include_archived) q = q.where('archived_at', 'is', null);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.q) q = q.where((eb) => containsText(eb.ref('name'), f.q!));
  const inScope = providerIdInScope(scope, 'traffic_providers.id');
  if (inScope) q = q.where(inScope);
  const page = pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
  return { ...page, data: page.data.map(toTrafficProvider) };
}

/** Campaigns (not archived) that take leads from the provider: their names, for a 409. */
export async function liveCampaignsUsing(db: Kysely<Database>, providerId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('campaigns')
    .select(['id', 'name'])
    .where('traffic_provider_id', '=', providerId)
    .where('archived_at', 'is', null)
    .orderBy('id')
    .limit(5)
    .execute();
  return rows.map((r) => `"${r.name}" (${r.id})`);
}

/** Whether anything at all still refers to the provider (leads, archived campaigns). */
export async function providerReferenced(db: Kysely<Database>, providerId: string): Promise<boolean> {
  const probes = [
    db.selectFrom('leads').select('id').where('traffic_provider_id', '=', providerId).limit(1),
    db.selectFrom('campaigns').select('id').where('traffic_provider_id', '=', providerId).limit(1),
  ];
  for (const probe of probes) if (await probe.executeTakeFirst()) return true;
  return false;
}

/** Active providers with silent_after_hours set, each with the time of its last lead (or null). */
export const watchedProviders = (db: Kysely<Database>) =>
  db
    .selectFrom('traffic_providers as p')
    .select((eb) => [
      'p.id',
      'p.name',
      'p.silent_after_hours',
      'p.created_at',
      eb
        .selectFrom('leads as l')
        .select((e) => e.fn.max('l.created_at').as('m'))
        .whereRef('l.traffic_provider_id', '=', 'p.id')
        .as('last_lead_at'),
    ])
    .where('p.silent_after_hours', 'is not', null)
    .where('p.status', '=', 'active')
    .where('p.archived_at', 'is', null)
    .execute();

/**
 * The sale-status words partners have used on this provider's leads (trimmed, lower case, as the
 * sale-status map keys them): at most `limit`, alphabetical.
 */
export async function partnerWords(
  db: Kysely<Database>,
  providerId: string,
  limit: number,
  scope: DataScope,
): Promise<string[]> {
  let q = db
    .selectFrom('leads')
    .select('sale_status')
    .distinct()
    .where('traffic_provider_id', '=', providerId)
    .where('sale_status', 'is not', null);
  // A role limited to some partners reads only their words.
  const inScope = leadInScope(scope);
  if (inScope) q = q.where(inScope);
  const rows = await q
    .orderBy('sale_status')
    .limit(limit * 2)
    .execute();
  const words = new Set(rows.map((r) => r.sale_status!.trim().toLowerCase()).filter((w) => w !== ''));
  return [...words].sort().slice(0, limit);
}
