import type { Kysely } from 'kysely';
import type { Database, DeliveryState, DestinationKind } from '../db/tables.js';
import { leadInScope, rowInScope, type DataScope } from '../db/scope.js';
import { toStoredEvent } from './dispatcher.js';
import type { EventType } from './types.js';
import type { EventDelivery } from './schemas.js';

// A destination's delivery log: its deliveries newest first, and one with its tries.

interface DeliveryRow {
  id: number | string;
  event_id: number | string;
  type: string;
  occurred_at: string;
  lead_id: string | null;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: string;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
}

const deliveryColumns = [
  'd.id',
  'd.event_id',
  'e.type',
  'e.occurred_at',
  'e.lead_id',
  'd.state',
  'd.attempts',
  'd.next_attempt_at',
  'd.last_attempt_at',
  'd.last_status',
  'd.last_error',
] as const;

export function toDelivery(r: DeliveryRow): EventDelivery {
  return {
    id: String(r.id),
    event_id: `evt_${r.event_id}`,
    event_type: r.type as EventType,
    occurred_at: r.occurred_at,
    lead_id: r.lead_id,
    state: r.state,
    attempts: Number(r.attempts),
    next_attempt_at: r.state === 'pending' ? r.next_attempt_at : null,
    last_attempt_at: r.last_attempt_at,
    last_status: r.last_status === null ? null : Number(r.last_status),
    last_error: r.last_error,
  };
}

/** Newest first, before `beforeId` (the cursor), limit + 1 rows. */
export async function listDeliveries(
  db: Kysely<Database>,
  kind: DestinationKind,
  destinationId: string,
  scope: DataScope,
  q: { state?: DeliveryState; beforeId?: string; limit: number },
) {
  let query = db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select(deliveryColumns)
    .where('d.destination_kind', '=', kind)
    .where('d.destination_id', '=', destinationId);
  const inScope = leadInScope(scope, 'e'); // an event carries its lead's provider and partner
  if (inScope) query = query.where(inScope);
  if (q.state) query = query.where('d.state', '=', q.state);
  if (q.beforeId !== undefined) {
    if (!/^[0-9]{1,18}$/.test(q.beforeId)) return [];
    query = query.where('d.id', '<', Number(q.beforeId));
  }
  return query
    .orderBy('d.id', 'desc')
    .limit(q.limit + 1)
    .execute();
}

export async function findDelivery(
  db: Kysely<Database>,
  kind: DestinationKind,
  destinationId: string,
  deliveryId: string,
  scope: DataScope,
) {
  const row = await db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select([...deliveryColumns, 'e.partner_id', 'e.traffic_provider_id', 'e.campaign_id', 'e.data'])
    .where('d.destination_kind', '=', kind)
    .where('d.destination_id', '=', destinationId)
    .where('d.id', '=', Number(deliveryId))
    .executeTakeFirst();
  if (!row || !rowInScope(scope, row)) return null;
  const tries = await db
    .selectFrom('event_delivery_tries')
    .select(['attempted_at', 'duration_ms', 'http_status', 'ok', 'error', 'response_excerpt'])
    .where('delivery_id', '=', row.id)
    .orderBy('id')
    .execute();
  const event = toStoredEvent({ ...row, id: row.event_id });
  return {
    row,
    event,
    tries: tries.map((t) => ({
      ...t,
      duration_ms: Number(t.duration_ms),
      http_status: t.http_status === null ? null : Number(t.http_status),
      ok: Boolean(t.ok),
    })),
  };
}
