import { createHash } from 'node:crypto';

// The log's canonical forms, the same in scripts/verify-provider-log.mjs (which must not import
// them: a provider runs it alone). Keep the two in step; a change here breaks every saved copy.
//
// - data: JSON with object keys sorted (recursively), no spaces (`canonicalJson`).
// - an entry's hash: SHA-256, lower-case hex, of the UTF-8 bytes of
//   JSON.stringify([traffic_provider_id, seq, at, lead_id, kind, canonicalJson(data), prev_hash])
//   (seq a JSON number; every other member a JSON string). The first entry's prev_hash is
//   GENESIS (64 zeros).
// - a checkpoint signs (Ed25519) the UTF-8 bytes of the lines
//   "leadgate-provider-log-checkpoint-v1", traffic_provider_id, seq, hash, signed_at, joined by "\n".

export const GENESIS = '0'.repeat(64);
export const CHECKPOINT_CONTEXT = 'leadgate-provider-log-checkpoint-v1';

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

export interface ChainFields {
  traffic_provider_id: string;
  seq: number;
  at: string;
  lead_id: string;
  kind: string;
  /** canonicalJson of the entry's data */
  data: string;
  prev_hash: string;
}

export const entryHash = (e: ChainFields) =>
  createHash('sha256')
    .update(JSON.stringify([e.traffic_provider_id, e.seq, e.at, e.lead_id, e.kind, e.data, e.prev_hash]), 'utf8')
    .digest('hex');

export const checkpointMessage = (c: { traffic_provider_id: string; seq: number; hash: string; signed_at: string }) =>
  Buffer.from([CHECKPOINT_CONTEXT, c.traffic_provider_id, String(c.seq), c.hash, c.signed_at].join('\n'), 'utf8');
