// The portal's campaign reads (issue 27), narrowed to the principal's provider here, never in a
// handler: another provider's campaign is simply not found.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';

const columns = ['id', 'name', 'status', 'countries', 'payout'] as const;

/** A page of the provider's campaigns that are not archived, by id. */
export async function providerCampaignPage(
  db: Kysely<Database>,
  providerId: string,
  f: { limit: number; cursor?: string },
) {
  const after = decodeCursor(f.cursor, ['id']);
  let q = db
    .selectFrom('campaigns')
    .select(columns)
    .where('traffic_provider_id', '=', providerId)
    .where('archived_at', 'is', null)
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) q = q.where('id', '>', after.id);
  return pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
}

/** One of the provider's campaigns that is not archived (undefined: none, or another provider's). */
export const providerCampaign = (db: Kysely<Database>, providerId: string, id: string) =>
  db
    .selectFrom('campaigns')
    .select(columns)
    .where('traffic_provider_id', '=', providerId)
    .where('archived_at', 'is', null)
    .where('id', '=', id)
    .executeTakeFirst();
