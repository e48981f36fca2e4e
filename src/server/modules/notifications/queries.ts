import type { DB } from '../../db/database.js';
import type { EventType } from '../../events/types.js';

const UNREAD_COUNT_LIMIT = 1000;

/** The newest event id the operator has read (0: none). */
export async function lastRead(db: DB, operatorId: string): Promise<number> {
  const row = await db
    .selectFrom('notification_reads')
    .select('last_read_event_id')
    .where('operator_id', '=', operatorId)
    .executeTakeFirst();
  return row ? Number(row.last_read_event_id) : 0;
}

/** Alerts of these types after the operator's read mark, counted up to UNREAD_COUNT_LIMIT. */
export async function unreadCount(db: DB, types: EventType[], read: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('events')
        .select('id')
        .where('lead_id', 'is', null)
        .where('type', 'in', types)
        .where('id', '>', read)
        .limit(UNREAD_COUNT_LIMIT)
        .as('u'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Alerts (events without a lead) of these types, newest first, limit + 1 rows. */
export async function alertRows(
  db: DB,
  types: EventType[],
  q: { afterRead: number | null; beforeId: number | null; limit: number },
) {
  let query = db.selectFrom('events').selectAll().where('lead_id', 'is', null).where('type', 'in', types);
  if (q.afterRead !== null) query = query.where('id', '>', q.afterRead);
  if (q.beforeId !== null) query = query.where('id', '<', q.beforeId);
  return query
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
}

export async function newestEventId(db: DB): Promise<number> {
  const newest = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return Number(newest?.id ?? 0);
}

/** Moves the operator's read mark to `upTo`, never back. */
export async function advanceReadMark(db: DB, operatorId: string, upTo: number) {
  await db
    .insertInto('notification_reads')
    .values({ operator_id: operatorId, last_read_event_id: upTo })
    .onConflict((oc) =>
      oc
        .column('operator_id')
        .doUpdateSet({ last_read_event_id: upTo })
        .where('notification_reads.last_read_event_id', '<', upTo),
    )
    .execute();
}
