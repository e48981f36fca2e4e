import { Type, type Static } from 'typebox';
import { Nullable, NullableTimestamp, ResourceName, Timestamp } from '../../http/common-schemas.js';
import { ALL_EVENT_TYPES } from '../../events/types.js';
import { EventTypeName } from '../../events/schemas.js';

const Format = Type.Union([Type.Literal('json'), Type.Literal('slack'), Type.Literal('telegram')], {
  description:
    'json: the event as JSON ({type, timestamp, data}); slack: {"text"} for a Slack-compatible incoming webhook; ' +
    'telegram: {"chat_id", "text"} for the Telegram Bot API sendMessage (URL https://api.telegram.org/bot<token>/sendMessage). ' +
    'Every format is signed the same way.',
});

const EventTypes = Type.Array(EventTypeName, {
  minItems: 1,
  maxItems: ALL_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'The events sent to this webhook',
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    'http or https URL the events are POSTed to. Write-only past its origin: answers show the origin and a mask (the path may hold a token, as Slack and Telegram URLs do).',
});
const ChatId = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^(-?[0-9]+|@[A-Za-z0-9_]{5,64})$',
  description: 'Telegram chat: a numeric id or @channelname (telegram format only)',
});

const webhookFields = {
  id: Type.String(),
  name: Type.String(),
  url: Type.String({
    description: 'The origin, then "/••••" and the last 4 characters when the URL has a path or query',
  }),
  format: Format,
  telegram_chat_id: Nullable(Type.String()),
  event_types: Type.Array(EventTypeName),
  status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
    description: 'disabled: nothing is sent (set by an operator, or after failing for days)',
  }),
  disabled_reason: Nullable(
    Type.String({ description: 'Why Leadgate disabled it; null when active or disabled by an operator' }),
  ),
  failing_since: {
    ...NullableTimestamp,
    description: 'When its deliveries started failing without a success since; null when the last try succeeded',
  },
  owner_id: Nullable(
    Type.String({
      description:
        'The operator it sends as: who created it or last changed where or what it sends. An event of a type the owner may not read now (role changed, disabled) is not sent; its delivery is cancelled. Null: the owner was deleted, nothing is sent until someone changes it.',
    }),
  ),
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const Webhook = Type.Object(webhookFields, { title: 'Webhook' });
export type Webhook = Static<typeof Webhook>;

export const WebhookWithSecret = Type.Object(
  {
    ...webhookFields,
    secret: Type.String({
      description:
        'The signing secret (whsec_ + base64 of 32 random bytes). Shown only in this answer; rotate it to get a new one. Verify per the Standard Webhooks convention.',
    }),
  },
  { title: 'WebhookWithSecret' },
);

export const CreateWebhook = Type.Object(
  {
    name: ResourceName,
    url: Url,
    format: Type.Optional({ ...Format, default: 'json' }),
    telegram_chat_id: Type.Optional(ChatId),
    event_types: EventTypes,
  },
  { additionalProperties: false, title: 'CreateWebhook' },
);
export type CreateWebhook = Static<typeof CreateWebhook>;

export const UpdateWebhook = Type.Object(
  {
    name: Type.Optional(ResourceName),
    url: Type.Optional({ ...Url, description: 'A new URL; leave it out to keep the stored one' }),
    format: Type.Optional(Format),
    telegram_chat_id: Type.Optional(Type.Union([ChatId, Type.Null()])),
    event_types: Type.Optional(EventTypes),
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
        description: 'active again clears failing_since and disabled_reason',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'UpdateWebhook' },
);
export type UpdateWebhook = Static<typeof UpdateWebhook>;

/** An event type a webhook can send, and what reading it takes (events/types.ts). */
export const EventTypeInfo = Type.Object(
  {
    type: EventTypeName,
    label: Type.String({ description: 'A few words, for pickers' }),
    description: Type.String(),
    permission: Type.String({ description: "What the webhook's owner must hold for it to be sent (module:action)" }),
    alert: Type.Boolean({ description: 'Also a dashboard notification' }),
  },
  { title: 'EventTypeInfo' },
);

/** What a test event's receiver answered (POST /api/webhooks/{id}/test). */
export const TestEventResult = Type.Object(
  {
    event_id: Type.String({ description: 'The webhook-id header sent (evt_test_…)' }),
    ok: Type.Boolean({ description: 'The receiver answered 2xx' }),
    http_status: Nullable(Type.Integer({ format: 'int32' })),
    error: Nullable(Type.String()),
    response_excerpt: Nullable(Type.String()),
    duration_ms: Type.Integer({ format: 'int32' }),
  },
  { title: 'WebhookTestEventResult' },
);
