import { sql, type Insertable } from 'kysely';
import { isPostgres, type DB } from '../../db/database.js';
import type { ProviderLogTable } from '../../db/tables.js';

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

const ENTRY_COLUMNS = ['traffic_provider_id', 'seq', 'at', 'lead_id', 'kind', 'data', 'prev_hash', 'hash'] as const;
const ENTRY_TYPES = ['text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text'];

/**
 * Appends chained entries. On PostgreSQL one array per column (unnest): eight parameters for a
 * batch instead of eight per entry, which the driver and Kysely build far faster (the chaining
 * job runs in the process that takes leads).
 */
export async function appendEntries(db: DB, entries: Insertable<ProviderLogTable>[]): Promise<void> {
  if (!entries.length) return;
  if (!isPostgres(db)) return void (await db.insertInto('provider_log').values(entries).execute());
  const arrays = ENTRY_COLUMNS.map(
    (c, i) => sql`${entries.map((e) => (c === 'seq' ? String(e[c]) : e[c]))}::${sql.raw(ENTRY_TYPES[i])}[]`,
  );
  await sql`insert into provider_log (${sql.join(ENTRY_COLUMNS.map((c) => sql.ref(c)))})
    select * from unnest(${sql.join(arrays)})`.execute(db);
}

/** Removes chained (or dropped) facts by id: one parameter (an array, or JSON on SQLite). */
export async function removeFacts(db: DB, ids: (number | string)[]): Promise<void> {
  if (!ids.length) return;
  const list = isPostgres(db)
    ? sql`select unnest(${ids.map(String)}::bigint[])`
    : sql`select value from json_each(${JSON.stringify(ids.map(Number))})`;
  await sql`delete from provider_log_pending where id in (${list})`.execute(db);
}
