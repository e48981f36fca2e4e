import { Type, type Static } from 'typebox';
import { Nullable } from '../../http/common-schemas.js';
import { MACRO_LIST, POSTBACK_EVENTS, type PostbackEvent } from './macros.js';

export const PostbackEventName = Type.Unsafe<PostbackEvent>({
  type: 'string',
  enum: [...POSTBACK_EVENTS],
  description: 'The lead event that sends this postback',
});

const postbackFields = {
  event_type: PostbackEventName,
  campaign_id: Nullable(
    Type.String({
      maxLength: 100,
      description: "One of the provider's campaigns; null: every campaign without its own postback for this event",
    }),
  ),
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: `http(s) URL, called with GET. Macros (URL-encoded when filled): ${MACRO_LIST}. Shown in full to readers.`,
  }),
};

export const Postback = Type.Object(postbackFields, { title: 'ProviderPostback' });
export const PostbackList = Type.Object({ postbacks: Type.Array(Postback) }, { title: 'ProviderPostbacks' });
export const PutPostbacks = Type.Object(
  {
    postbacks: Type.Array(Type.Object(postbackFields, { additionalProperties: false }), {
      maxItems: 100,
      description: 'Replaces every postback of the provider; at most one per event and campaign',
    }),
  },
  { additionalProperties: false, title: 'PutProviderPostbacks' },
);
export type PutPostbacks = Static<typeof PutPostbacks>;

export const TestPostback = Type.Object(
  {
    event_type: PostbackEventName,
    campaign_id: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
    lead_id: Type.Optional(
      Type.String({
        maxLength: 100,
        description: "One of the provider's leads to fill the macros from; default: a sample lead",
      }),
    ),
  },
  { additionalProperties: false, title: 'TestPostbackRequest' },
);

export const TestPostbackResult = Type.Object(
  {
    url: Type.String({ description: 'The URL called (GET)' }),
    ok: Type.Boolean({ description: 'The tracker answered 2xx' }),
    http_status: Nullable(Type.Integer({ format: 'int32' })),
    error: Nullable(Type.String()),
    response_excerpt: Nullable(Type.String()),
    duration_ms: Type.Integer({ format: 'int32' }),
  },
  { title: 'TestPostbackResult' },
);
