import { Type, type Static } from 'typebox';
import type { DB } from '../db/database.js';
import type { Permission } from '../auth/permissions.js';
import type { DestinationKind } from '../db/tables.js';
import { conflict, notFound } from '../http/errors.js';
import { problems } from '../http/openapi.js';
import { decodeCursor, Page, pageOf } from '../http/pagination.js';
import { principalOf, type App } from '../types.js';
import { actorOf, audit, type Actor } from '../modules/audit/service.js';
import { requeueDelivery } from './delivery-queries.js';
import type { AuditAction } from '../modules/audit/actions.js';
import { findDelivery, listDeliveries, toDelivery } from './deliveries.js';
import type { StoredEvent } from './dispatcher.js';
import { DeliveryListQuery, EventDelivery, EventDeliveryDetail } from './schemas.js';
import { RETENTION_DAYS } from './dispatcher.js';
import { mayReadEvent } from './types.js';

// A destination's delivery log, as three routes under its own path: the list, one delivery with
// each try's answer, and a manual retry. Webhooks and traffic providers' postbacks use it.
// A delivery shows (and carries) its event: the caller sees only deliveries of event types it
// may read (each type's permission, events/types.ts); another is not found.

export interface DeliveryLogOptions {
  kind: DestinationKind;
  /** '/api/webhooks/:id' */
  base: string;
  tags: string[];
  what: string;
  operation: string;
  view: Permission;
  edit: Permission;
  retryAction: AuditAction;
  /** The destination (404 when there is none) and whether it sends. */
  find(id: string): Promise<{ id: string; active: boolean }>;
  /** What would be sent for the event now. */
  payload(destinationId: string, event: StoredEvent): Promise<string>;
}

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

// The use cases behind the three routes, for any destination kind.

type DeliveryLog = Pick<DeliveryLogOptions, 'kind' | 'what' | 'retryAction' | 'find' | 'payload'>;

/** The destination's deliveries, newest first, of the event types the actor may read. */
export async function listDestinationDeliveries(
  db: DB,
  actor: Actor,
  o: DeliveryLog,
  id: string,
  query: Static<typeof DeliveryListQuery>,
) {
  const dest = await o.find(id);
  const after = decodeCursor(query.cursor, ['id'] as const);
  const rows = await listDeliveries(db, o.kind, dest.id, {
    state: query.state,
    beforeId: after?.id,
    limit: query.limit,
  });
  // Paged over all of them, so the cursor moves past the ones left out.
  const page = pageOf(rows.map(toDelivery), query.limit, (d) => ({ id: d.id }));
  const permissions = principalOf(actor).permissions;
  return { ...page, data: page.data.filter((d) => mayReadEvent(permissions, d.event_type)) };
}

/** One delivery with what it sends and each try's answer; not found unless the actor may read its event. */
export async function getDestinationDelivery(db: DB, actor: Actor, o: DeliveryLog, id: string, deliveryId: string) {
  const dest = await o.find(id);
  const found = await findDelivery(db, o.kind, dest.id, deliveryId);
  if (!found || !mayReadEvent(principalOf(actor).permissions, found.event.type)) return notFound('delivery');
  return { ...toDelivery(found.row), payload: await o.payload(dest.id, found.event), tries: found.tries };
}

/** Sends a delivery again now (409 while the destination is disabled). */
export async function retryDestinationDelivery(db: DB, actor: Actor, o: DeliveryLog, id: string, deliveryId: string) {
  const dest = await o.find(id);
  if (!dest.active) conflict(`This ${o.what.toLowerCase()} is disabled: enable it before retrying a delivery.`);
  const now = Date.now();
  const found = await findDelivery(db, o.kind, dest.id, deliveryId);
  if (!found || !mayReadEvent(principalOf(actor).permissions, found.event.type)) return notFound('delivery');
  await requeueDelivery(db, deliveryId, now);
  await audit(db, actor, {
    action: o.retryAction,
    target_type: o.kind,
    target_id: dest.id,
    details: { delivery_id: found.row.id, event_type: found.event.type },
  });
  return toDelivery((await findDelivery(db, o.kind, dest.id, deliveryId))!.row);
}
