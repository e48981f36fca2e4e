import type { DB } from '../../db/database.js';

// The provider log's SQL. Every read names its provider: a portal caller's comes from its
// principal (routes.ts), never from the request.

/** Providers with facts due (visible) now. */
export const providersDue = (db: DB, now: string, limit: number) =>
  db
    .selectFrom('provider_log_pending')
    .select('traffic_provider_id')
    .distinct()
    .where('visible_at', '<=', now)
    .limit(limit)
    .execute()
    .then((rows) => rows.map((r) => r.traffic_provider_id));

/** One provider's due facts, oldest visible first. */
export const dueFacts = (db: DB, providerId: string, now: string, limit: number) =>
  db
    .selectFrom('provider_log_pending')
    .selectAll()
    .where('traffic_provider_id', '=', providerId)
    .where('visible_at', '<=', now)
    .orderBy('visible_at')
    .orderBy('id')
    .limit(limit)
    .execute();

/** The provider's last entry (its chain head), or undefined. */
export const head = (db: DB, providerId: string) =>
  db
    .selectFrom('provider_log')
    .select(['seq', 'hash'])
    .where('traffic_provider_id', '=', providerId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();

export const entriesAfter = (db: DB, providerId: string, after: number, limit: number) =>
  db
    .selectFrom('provider_log')
    .select(['seq', 'at', 'lead_id', 'kind', 'data', 'prev_hash', 'hash'])
    .where('traffic_provider_id', '=', providerId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute();

export const latestCheckpoint = (db: DB, providerId: string) =>
  db
    .selectFrom('provider_log_checkpoints')
    .selectAll()
    .where('traffic_provider_id', '=', providerId)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();

/** Providers whose chain head has moved past their last checkpoint (or that have none). */
export const headsUnsigned = (db: DB) =>
  db
    .selectFrom('provider_log as l')
    .select('l.traffic_provider_id')
    .groupBy('l.traffic_provider_id')
    .having((eb) =>
      eb(
        eb.fn.max('l.seq'),
        '>',
        eb.fn.coalesce(
          eb
            .selectFrom('provider_log_checkpoints as c')
            .select((c) => c.fn.max('c.seq').as('s'))
            .whereRef('c.traffic_provider_id', '=', 'l.traffic_provider_id'),
          eb.lit(0),
        ),
      ),
    )
    .execute()
    .then((rows) => rows.map((r) => r.traffic_provider_id));
