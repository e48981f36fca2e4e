import { Type } from 'typebox';
import { RETENTION_DAYS } from '../../events/dispatcher.js';
import { DeliveryListQuery, EventDelivery, EventDeliveryDetail } from '../../events/schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import {
  getDestinationDelivery,
  listDestinationDeliveries,
  retryDestinationDelivery,
  type DeliveryLogOptions,
} from './service.js';

// A destination's delivery log, as three routes under its own path: the list, one delivery with
// each try's answer, and a manual retry. Webhooks and traffic providers' postbacks use it.
// A delivery shows (and carries) its event: the caller sees only deliveries of event types it
// may read (each type's permission, events/types.ts); another is not found.

const DeliveryParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100 }),
    deliveryId: Type.String({ minLength: 1, maxLength: 18, pattern: '^[0-9]+$' }),
  },
  { additionalProperties: false },
);
const IdOnly = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }, { additionalProperties: false });

export function deliveryLogRoutes(app: App, o: DeliveryLogOptions) {
  app.get(
    `${o.base}/deliveries`,
    {
      config: { permission: o.view },
      schema: {
        operationId: `list${o.operation}Deliveries`,
        tags: o.tags,
        summary: `${o.what}: delivery log`,
        description: `Newest first; kept ${RETENTION_DAYS} days. Only deliveries of event types you may read (lead events need leads:view, …): a page may then hold fewer than limit, next_cursor still goes on.`,
        params: IdOnly,
        querystring: DeliveryListQuery,
        response: { 200: Page(EventDelivery, `${o.operation}DeliveryPage`), ...problems(404) },
      },
    },
    async (req) => listDestinationDeliveries(app.db, actorOf(req), o, req.params.id, req.query),
  );

  app.get(
    `${o.base}/deliveries/:deliveryId`,
    {
      config: { permission: o.view },
      schema: {
        operationId: `get${o.operation}Delivery`,
        tags: o.tags,
        summary: `${o.what}: one delivery, with the answer of each try`,
        params: DeliveryParams,
        response: { 200: EventDeliveryDetail, ...problems(404) },
      },
    },
    async (req) => getDestinationDelivery(app.db, actorOf(req), o, req.params.id, req.params.deliveryId),
  );

  app.post(
    `${o.base}/deliveries/:deliveryId/retry`,
    {
      config: { permission: o.edit },
      schema: {
        operationId: `retry${o.operation}Delivery`,
        tags: o.tags,
        summary: `${o.what}: send a delivery again`,
        description:
          'A failed or cancelled delivery (or a delivered one, to send it once more) is sent again now, then retried for another 24 hours. ' +
          'One being sent right now is left to its try. 409 while the destination is disabled.',
        params: DeliveryParams,
        response: { 200: EventDelivery, ...problems(404, 409) },
      },
    },
    async (req) => retryDestinationDelivery(app.db, actorOf(req), o, req.params.id, req.params.deliveryId),
  );
}
