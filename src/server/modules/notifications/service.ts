import type { DB } from '../../db/database.js';
import { toStoredEvent } from '../../events/dispatcher.js';
import { safeEvents } from '../../events/safe-events.js';
import { ALERT_TYPES, mayReadEvent } from '../../events/types.js';
import { decodeCursor, encodeCursor } from '../../http/pagination.js';
import { principalOf } from '../../types.js';
import type { Actor } from '../audit/service.js';
import { describeEvent, eventNames } from '../webhooks/service.js';
import { advanceReadMark, alertRows, lastRead, newestEventId, unreadCount } from './queries.js';

// The dashboard's notifications: the alert events (caps, partners, webhooks), each shown to
// operators whose role (or key) may see what it is about, with an unread count kept per operator.
// Alerts are the events without a lead (the events_alerts index). What they carry leaves
// through safeEvents, as to a webhook: reading partners is not reading leads' contacts.

const visibleTypes = (permissions: ReadonlySet<string>) => ALERT_TYPES.filter((t) => mayReadEvent(permissions, t));

/** The actor's alerts, newest first, each with its line and whether it is unread. */
export async function listNotifications(
  db: DB,
  actor: Actor,
  query: { cursor?: string; limit: number; unread_only: boolean },
) {
  const principal = principalOf(actor);
  const types = visibleTypes(principal.permissions);
  if (!types.length) return { data: [], next_cursor: null, unread_count: 0 };
  const read = await lastRead(db, principal.operator.id);
  const after = decodeCursor(query.cursor, ['id'] as const);
  const rows = await alertRows(
    db,
    types,
    {
      afterRead: query.unread_only ? read : null,
      beforeId: after ? (/^[0-9]{1,18}$/.test(after.id) ? Number(after.id) : 0) : null,
      limit: query.limit,
    },
    principal.scope,
  );
  const more = rows.length > query.limit;
  const page = more ? rows.slice(0, query.limit) : rows;
  const stored = page.map(toStoredEvent);
  const events = stored.map(await safeEvents(db, stored));
  const names = await eventNames(db, events);
  const data = events.map((e) => ({ ...e, text: describeEvent(e, names(e)), unread: Number(e.id) > read }));
  return {
    data,
    next_cursor: more ? encodeCursor({ id: String(page.at(-1)!.id) }) : null,
    unread_count: await unreadCount(db, types, read, principal.scope),
  };
}

/** Marks read every alert up to `upTo` (all without it), never moving the mark back. */
export async function markNotificationsRead(db: DB, actor: Actor, upTo: string | undefined) {
  const principal = principalOf(actor);
  const newest = await newestEventId(db);
  const mark = Math.min(upTo !== undefined ? Number(upTo) : Infinity, newest);
  await advanceReadMark(db, principal.operator.id, mark);
  const read = await lastRead(db, principal.operator.id);
  const types = visibleTypes(principal.permissions);
  return { unread_count: types.length ? await unreadCount(db, types, read, principal.scope) : 0 };
}
