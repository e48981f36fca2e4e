import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/common-schemas.js';
import { decodeCursor, encodeCursor, PageQuery } from '../../http/pagination.js';
import type { DB } from '../../db/database.js';
import { ALERT_TYPES, mayReadEvent, type EventType } from '../../events/types.js';
import { principalOf, type App } from '../../types.js';
import { EventTypeName } from '../../events/schemas.js';
import { describeEvent, eventNames } from '../webhooks/service.js';
import { toStoredEvent } from '../../events/dispatcher.js';
import { safeEvents } from '../../events/safe-events.js';

// The dashboard's notifications: the alert events (caps, partners, webhooks), each shown to
// operators whose role (or key) may see what it is about, with an unread count kept per operator.
// Alerts are the events without a lead (the events_alerts index). What they carry leaves
// through safeEvents, as to a webhook: reading partners is not reading leads' contacts.

const TAGS = ['Notifications'];

const Notification = Type.Object(
  {
    id: Type.String({ description: 'The event id; pass it as up_to to mark it and everything older read' }),
    type: EventTypeName,
    occurred_at: Timestamp,
    text: Type.String({ description: 'One line an operator reads' }),
    partner_id: Nullable(Type.String()),
    traffic_provider_id: Nullable(Type.String()),
    campaign_id: Nullable(Type.String()),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'What the event carries (as webhooks receive it)',
    }),
    unread: Type.Boolean(),
  },
  { title: 'Notification' },
);

const NotificationPage = Type.Object(
  {
    data: Type.Array(Notification),
    next_cursor: Nullable(Type.String()),
    unread_count: Type.Integer({
      format: 'int32',
      description: 'Unread notifications in all (not only this page), up to 1000',
    }),
  },
  { title: 'NotificationPage' },
);

const UNREAD_COUNT_LIMIT = 1000;

async function lastRead(db: DB, operatorId: string): Promise<number> {
  const row = await db
    .selectFrom('notification_reads')
    .select('last_read_event_id')
    .where('operator_id', '=', operatorId)
    .executeTakeFirst();
  return row ? Number(row.last_read_event_id) : 0;
}

/** Alerts of these types after the operator's read mark, counted up to UNREAD_COUNT_LIMIT. */
async function unreadCount(db: DB, types: EventType[], read: number): Promise<number> {
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

export default async function notificationRoutes(app: App) {
  const visibleTypes = (permissions: ReadonlySet<string>) => ALERT_TYPES.filter((t) => mayReadEvent(permissions, t));

  app.get(
    '/api/notifications',
    {
      config: { authenticated: true },
      schema: {
        operationId: 'listNotifications',
        tags: TAGS,
        summary: 'Alerts, newest first, with the unread count',
        description: `Cap alerts need partners:view, webhook alerts webhooks:view; an operator sees only those. Kept 30 days.`,
        querystring: Type.Object(
          { ...PageQuery, unread_only: Type.Boolean({ default: false }) },
          { additionalProperties: false },
        ),
        response: { 200: NotificationPage },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      const types = visibleTypes(principal.permissions);
      if (!types.length) return { data: [], next_cursor: null, unread_count: 0 };
      const read = await lastRead(app.db, principal.operator.id);
      const after = decodeCursor(req.query.cursor, ['id'] as const);
      let q = app.db.selectFrom('events').selectAll().where('lead_id', 'is', null).where('type', 'in', types);
      if (req.query.unread_only) q = q.where('id', '>', read);
      if (after) q = q.where('id', '<', /^[0-9]{1,18}$/.test(after.id) ? Number(after.id) : 0);
      const rows = await q
        .orderBy('id', 'desc')
        .limit(req.query.limit + 1)
        .execute();
      const more = rows.length > req.query.limit;
      const page = more ? rows.slice(0, req.query.limit) : rows;
      const stored = page.map(toStoredEvent);
      const events = stored.map(await safeEvents(app.db, stored));
      const names = await eventNames(app.db, events);
      const data = events.map((e) => ({ ...e, text: describeEvent(e, names(e)), unread: Number(e.id) > read }));
      return {
        data,
        next_cursor: more ? encodeCursor({ id: String(page.at(-1)!.id) }) : null,
        unread_count: await unreadCount(app.db, types, read),
      };
    },
  );
  app.post(
    '/api/notifications/read',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'markNotificationsRead',
        tags: TAGS,
        summary: 'Mark notifications read',
        description:
          'Marks read every notification up to and including up_to (an id from the list); without up_to, all of them. Never moves the mark back.',
        body: Type.Object(
          {
            up_to: Type.Optional(
              Type.String({ maxLength: 18, pattern: '^[0-9]{1,18}$', description: 'A notification id' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ unread_count: Type.Integer({ format: 'int32' }) }, { title: 'NotificationsRead' }),
        },
      },
    },
    async (req) => {
      const principal = principalOf(req);
      const newest = await app.db
        .selectFrom('events')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirst();
      const upTo = Math.min(req.body.up_to !== undefined ? Number(req.body.up_to) : Infinity, Number(newest?.id ?? 0));
      await app.db
        .insertInto('notification_reads')
        .values({ operator_id: principal.operator.id, last_read_event_id: upTo })
        .onConflict((oc) =>
          oc
            .column('operator_id')
            .doUpdateSet({ last_read_event_id: upTo })
            .where('notification_reads.last_read_event_id', '<', upTo),
        )
        .execute();
      const read = await lastRead(app.db, principal.operator.id);
      const types = visibleTypes(principal.permissions);
      return { unread_count: types.length ? await unreadCount(app.db, types, read) : 0 };
    },
  );
}
