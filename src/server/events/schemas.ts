import { Type, type Static } from 'typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../http/common-schemas.js';
import { PageQuery } from '../http/pagination.js';
import { ALL_EVENT_TYPES, EVENT_TYPES, type EventType } from './types.js';

// The delivery log of a destination (a webhook, a traffic provider's postbacks).

export const EventTypeName = Type.Unsafe<EventType>({
  type: 'string',
  enum: [...ALL_EVENT_TYPES],
  description: ALL_EVENT_TYPES.map((t) => `${t}: ${EVENT_TYPES[t].description}`).join('; '),
});

const DeliveryState = Type.Union(
  [Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed'), Type.Literal('cancelled')],
  {
    description:
      'pending: to be sent (next_attempt_at); delivered: answered 2xx; failed: given up 24 h after it was made (retry to send again); cancelled: the destination was disabled or removed',
  },
);

const deliveryFields = {
  id: Type.String(),
  event_id: Type.String({ description: "The event's id (a webhook's webhook-id header): the same on every try" }),
  event_type: EventTypeName,
  occurred_at: Timestamp,
  lead_id: Nullable(Type.String()),
  state: DeliveryState,
  attempts: Type.Integer({ format: 'int32', description: 'Tries so far' }),
  next_attempt_at: { ...NullableTimestamp, description: 'When it is tried next; null unless pending' },
  last_attempt_at: NullableTimestamp,
  last_status: Nullable(
    Type.Integer({ format: 'int32', description: 'HTTP status of the last try; null when no answer came' }),
  ),
  last_error: Nullable(Type.String()),
};
export const EventDelivery = Type.Object(deliveryFields, { title: 'EventDelivery' });
export type EventDelivery = Static<typeof EventDelivery>;

export const DeliveryTry = Type.Object(
  {
    attempted_at: Timestamp,
    duration_ms: Type.Integer({ format: 'int32' }),
    http_status: Nullable(Type.Integer({ format: 'int32' })),
    ok: Type.Boolean(),
    error: Nullable(Type.String()),
    response_excerpt: Nullable(Type.String({ description: 'The start of the answer (up to 2 KiB)' })),
  },
  { title: 'EventDeliveryTry' },
);
export const EventDeliveryDetail = Type.Object(
  {
    ...deliveryFields,
    payload: Type.String({ description: "What is sent: a webhook's body, a postback's URL (as it would be sent now)" }),
    tries: Type.Array(DeliveryTry, { description: 'Oldest first' }),
  },
  { title: 'EventDeliveryDetail' },
);

export const DeliveryListQuery = Type.Object(
  { ...PageQuery, state: Type.Optional(DeliveryState) },
  { additionalProperties: false },
);
export const DeliveryParams = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 100 }),
    deliveryId: Type.String({ minLength: 1, maxLength: 20, pattern: '^[0-9]+$' }),
  },
  { additionalProperties: false },
);
