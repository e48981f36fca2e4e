import { Type } from 'typebox';
import { PROVIDER_FACT_KINDS, type ProviderFactKind } from '../../db/provider-facts.js';
import { Timestamp } from '../../http/common-schemas.js';

const Hash = Type.String({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256, lower-case hex' });

export const LogQuery = Type.Object(
  {
    after: Type.Integer({
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
      default: 0,
      description: 'Entries with a seq above this (0: from the first); next_cursor of the previous page',
    }),
    limit: Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: 500,
      default: 50,
      description: 'Page size (1–500, default 50)',
    }),
  },
  { additionalProperties: false },
);

export const LogEntry = Type.Object(
  {
    seq: Type.Integer({ format: 'int64', minimum: 1, description: '1, 2, … in this provider’s log' }),
    at: Timestamp,
    lead_id: Type.String(),
    kind: Type.Unsafe<ProviderFactKind>({ type: 'string', enum: [...PROVIDER_FACT_KINDS] }),
    data: Type.Record(Type.String(), Type.Unknown(), { description: 'What the provider was shown (see the README)' }),
    prev_hash: Hash,
    hash: Hash,
  },
  { title: 'ProviderLogEntry' },
);

export const LogPage = Type.Object(
  {
    data: Type.Array(LogEntry),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as after= for the next page; null on the last page',
    }),
  },
  { title: 'ProviderLogPage' },
);

export const Checkpoint = Type.Object(
  {
    traffic_provider_id: Type.String(),
    seq: Type.Integer({ format: 'int64', minimum: 0, description: 'The head signed; 0: the log was empty' }),
    hash: Hash,
    signed_at: Timestamp,
    signature: Type.String({ description: 'Ed25519 over the checkpoint message (README), base64' }),
    key_id: Type.String(),
  },
  { title: 'ProviderLogCheckpoint' },
);

export const PublicKey = Type.Object(
  {
    algorithm: Type.Literal('Ed25519'),
    key_id: Type.String({ description: 'The first 16 hex digits of SHA-256 over the raw key' }),
    public_key_pem: Type.String({ description: 'SPKI, PEM' }),
    public_key_raw: Type.String({ description: 'The 32-byte key, base64' }),
  },
  { title: 'ProviderLogPublicKey' },
);
