import { sql, type Expression, type SqlBool } from 'kysely';
import type { DB } from '../../db/database.js';
import { partnerIdInScope, providerIdInScope } from '../../db/record-scope.js';
import type { DataScope } from '../../db/scope.js';
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

/**
 * An alert is about a partner or a traffic provider (or neither): a scoped reader sees those
 * about its own, and of a dimension its scope leaves open, all. Null: no narrowing.
 */
function alertInScope(scope: DataScope): Expression<SqlBool> | null {
  const parts: Expression<SqlBool>[] = [];
  for (const [column, cond] of [
    ['events.partner_id', partnerIdInScope(scope, 'events.partner_id')],
    ['events.traffic_provider_id', providerIdInScope(scope, 'events.traffic_provider_id')],
  ] as const) {
    if (cond) parts.push(sql<SqlBool>`(${sql.ref(column)} is null or ${cond})`);
  }
  return parts.length ? sql<SqlBool>`(${sql.join(parts, sql` and `)})` : null;
}

/** Alerts of these types after the operator's read mark, counted up to UNREAD_COUNT_LIMIT. */
export async function unreadCount(db: DB, types: EventType[], read: number, scope: DataScope): Promise<number> {
  const inScope = alertInScope(scope);
  const row = await db
    .selectFrom((eb) => {
      let q = eb
        .selectFrom('events')
        .select('id')
        .where('lead_id', 'is', null)
        .where('type', 'in', types)
        .where('id', '>', read);
      if (inScope) q = q.where(inScope);
      return q.limit(UNREAD_COUNT_LIMIT).as('u');
    })
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Alerts (events without a lead) of these types, newest first, limit + 1 rows. */
export async function alertRows(
  db: DB,
  types: EventType[],
  q: { afterRead: number | null; beforeId: number | null; limit: number },
  scope: DataScope,
) {
  let query = db.selectFrom('events').selectAll().where('lead_id', 'is', null).where('type', 'in', types);
  const inScope = alertInScope(scope);
  if (inScope) query = query.where(inScope);
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
