import { Type } from 'typebox';
import { Nullable, Timestamp } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { EventTypeName } from '../../events/schemas.js';
import { actorOf } from '../audit/service.js';
import { listNotifications, markNotificationsRead } from './service.js';

// The dashboard's notifications (service.ts): alerts the caller may read, with an unread count.

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

export default async function notificationRoutes(app: App) {
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
    async (req) => listNotifications(app.db, actorOf(req), req.query),
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
    async (req) => markNotificationsRead(app.db, actorOf(req), req.body.up_to),
  );
}
