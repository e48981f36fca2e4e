import { Type } from 'typebox';
import { Nullable, NullableTimestamp, Timestamp } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';

export const BlockKindSchema = Type.Union(
  [
    Type.Literal('email'),
    Type.Literal('email_domain'),
    Type.Literal('phone'),
    Type.Literal('ip'),
    Type.Literal('sub_id'),
  ],
  {
    description:
      'email: one address (any case or Unicode spelling of it); email_domain: a domain and all its subdomains; ' +
      'phone: one number in international format; ip: an address or a CIDR block (IPv4 or IPv6); ' +
      'sub_id: a value in any of sub_id1–sub_id5',
  },
);

const ProviderRef = Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()], {
  description: "null or left out: every traffic provider's leads; else this provider's only",
});
const Note = Type.Union([Type.String({ maxLength: 500 }), Type.Null()], {
  description: 'Why it is listed (at most 500 characters)',
});
const Expiry = Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Null()], {
  description: 'When the entry stops blocking (in the future); null: never',
});

export const BlocklistEntry = Type.Object(
  {
    id: Type.String(),
    kind: BlockKindSchema,
    value: Type.String({
      description:
        'As matched (normalized: emails lower case in NFKC, phones E.164, IP blocks as a network). Emails and ' +
        'phones are masked unless the caller holds leads:contacts',
    }),
    traffic_provider_id: Nullable(Type.String({ description: 'null: global' })),
    traffic_provider_name: Nullable(Type.String()),
    expires_at: NullableTimestamp,
    active: Type.Boolean({ description: 'false once expires_at has passed' }),
    note: Nullable(Type.String()),
    created_by: Nullable(Type.String({ description: 'The operator who added it' })),
    created_by_name: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { title: 'BlocklistEntry', additionalProperties: false },
);

export const CreateBlocklistEntry = Type.Object(
  {
    kind: BlockKindSchema,
    value: Type.String({ minLength: 1, maxLength: 500 }),
    traffic_provider_id: Type.Optional(ProviderRef),
    expires_at: Type.Optional(Expiry),
    note: Type.Optional(Note),
  },
  { additionalProperties: false },
);

export const UpdateBlocklistEntry = Type.Object(
  { expires_at: Type.Optional(Expiry), note: Type.Optional(Note) },
  { additionalProperties: false },
);

export const BlocklistQuery = Type.Object(
  {
    ...PageQuery,
    kind: Type.Optional(BlockKindSchema),
    traffic_provider_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'A provider id, or "global" for global entries only' }),
    ),
    value: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 500,
        description:
          'Entries for exactly this value (any spelling of it: it is normalized per kind as entries are). A whole email ' +
          'or phone number needs leads:contacts (else 400: it would confirm a contact the answers mask)',
      }),
    ),
    include_expired: Type.Boolean({ default: false, description: 'Also entries whose expires_at has passed' }),
  },
  { additionalProperties: false },
);

export const BlocklistImportQuery = Type.Object(
  {
    kind: Type.Optional({ ...BlockKindSchema, description: 'The kind of every row, when the file has no kind column' }),
    traffic_provider_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'The provider of rows that name none; else global' }),
    ),
    expires_at: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 40, description: 'The expiry of rows that give none; else never' }),
    ),
  },
  { additionalProperties: false },
);

export const BlocklistImportResult = Type.Object(
  {
    rows: Type.Integer({ description: 'Data rows read' }),
    added: Type.Integer({ description: 'Entries added' }),
    already_listed: Type.Integer({
      description: 'Rows whose value was already listed for the same scope (left as they are)',
    }),
  },
  { title: 'BlocklistImportResult', additionalProperties: false },
);
