import type { Static } from 'typebox';
import type { DB } from '../../db/database.js';
import type { DataScope } from '../../db/scope.js';
import { findDelivery, listDeliveries, toDelivery } from '../../events/deliveries.js';
import { requeueDelivery } from '../../events/delivery-queries.js';
import type { DeliveryListQuery } from '../../events/schemas.js';
import { mayReadEvent } from '../../events/types.js';
import { conflict, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { principalOf } from '../../types.js';
import { audit, scopeOf, type Actor } from '../audit/service.js';
import type { Permission } from '../../auth/permissions.js';
import type { DestinationKind } from '../../db/tables.js';
import type { StoredEvent } from '../../events/dispatcher.js';
import type { AuditAction } from '../audit/actions.js';

// The use cases behind the three routes, for any destination kind.

/** What a destination kind tells the delivery log (routes.ts): its paths, permissions and records. */
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
  /** The destination (404 when there is none or it is out of the reader's scope) and whether it sends. */
  find(id: string, scope: DataScope): Promise<{ id: string; active: boolean }>;
  /** What would be sent for the event now. */
  payload(destinationId: string, event: StoredEvent): Promise<string>;
}

/**
 * Whether the actor may read a delivery of this event type. A traffic provider's portal user reads
 * every delivery of its own postbacks: they carry its own leads' events only.
 */
const mayRead = (actor: Actor, eventType: Parameters<typeof mayReadEvent>[1]) =>
  actor.provider ? true : mayReadEvent(principalOf(actor).permissions, eventType);

type DeliveryLog = Pick<DeliveryLogOptions, 'kind' | 'what' | 'retryAction' | 'find' | 'payload'>;
/** What reading a delivery log takes (the portal reads its postbacks' log, never retries). */
export type DeliveryLogReads = Omit<DeliveryLog, 'retryAction'>;

/** The destination's deliveries, newest first, of the event types the actor may read. */
export async function listDestinationDeliveries(
  db: DB,
  actor: Actor,
  o: DeliveryLogReads,
  id: string,
  query: Static<typeof DeliveryListQuery>,
) {
  const scope = scopeOf(actor);
  const dest = await o.find(id, scope);
  const after = decodeCursor(query.cursor, ['id'] as const);
  const rows = await listDeliveries(db, o.kind, dest.id, scope, {
    state: query.state,
    beforeId: after?.id,
    limit: query.limit,
  });
  // Paged over all of them, so the cursor moves past the ones left out.
  const page = pageOf(rows.map(toDelivery), query.limit, (d) => ({ id: d.id }));
  return { ...page, data: page.data.filter((d) => mayRead(actor, d.event_type)) };
}

/** One delivery with what it sends and each try's answer; not found unless the actor may read its event. */
export async function getDestinationDelivery(
  db: DB,
  actor: Actor,
  o: DeliveryLogReads,
  id: string,
  deliveryId: string,
) {
  const scope = scopeOf(actor);
  const dest = await o.find(id, scope);
  const found = await findDelivery(db, o.kind, dest.id, deliveryId, scope);
  if (!found || !mayRead(actor, found.event.type)) return notFound('delivery');
  return { ...toDelivery(found.row), payload: await o.payload(dest.id, found.event), tries: found.tries };
}

/** Sends a delivery again now (409 while the destination is disabled). */
export async function retryDestinationDelivery(db: DB, actor: Actor, o: DeliveryLog, id: string, deliveryId: string) {
  const scope = scopeOf(actor);
  const dest = await o.find(id, scope);
  if (!dest.active) conflict(`This ${o.what.toLowerCase()} is disabled: enable it before retrying a delivery.`);
  const now = Date.now();
  const found = await findDelivery(db, o.kind, dest.id, deliveryId, scope);
  if (!found || !mayRead(actor, found.event.type)) return notFound('delivery');
  await requeueDelivery(db, deliveryId, now);
  await audit(db, actor, {
    action: o.retryAction,
    target_type: o.kind,
    target_id: dest.id,
    details: { delivery_id: found.row.id, event_type: found.event.type },
  });
  return toDelivery((await findDelivery(db, o.kind, dest.id, deliveryId, scope))!.row);
}
