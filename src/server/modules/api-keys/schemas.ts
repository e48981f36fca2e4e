import { Type } from 'typebox';
import { PermissionList } from '../roles/schemas.js';

export const KeyStatus = Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]);

const keyFields = {
  id: Type.String({ description: 'Public lookup id (also inside the secret)' }),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
    description: 'First use recorded at once, later uses at most once a minute',
  }),
  revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  status: KeyStatus,
  prefix: Type.String({ description: 'The non-secret start of the key (lg_ + id), to recognise it' }),
  operator_id: Type.String(),
};

export const ApiKey = Type.Object(keyFields, { title: 'ApiKey' });

export const ApiKeyCreated = Type.Object(
  {
    ...keyFields,
    secret: Type.String({
      description: 'The key itself (lg_…). Shown only in this response; store it in a secret manager.',
    }),
  },
  { title: 'ApiKeyCreated' },
);

export const CreateApiKey = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: '\\S',
      description: 'What the key is for, e.g. "CRM sync"',
    }),
    scopes: PermissionList(1, 'module:action scopes (at least one); each must be held by your role'),
    expires_at: Type.Optional(
      Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Null()], {
        description: 'Optional expiry, in the future',
      }),
    ),
  },
  { additionalProperties: false },
);
