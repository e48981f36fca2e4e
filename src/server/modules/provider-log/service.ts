import type { DB } from '../../db/database.js';
import type { ProviderFactKind } from '../../db/provider-facts.js';
import { checkpoint, type Checkpoint } from './chain.js';
import { signingKey } from './keys.js';
import { entriesAfter } from './queries.js';

// The provider log's use cases for the portal (routes.ts): a provider reads its own chain (the
// provider id always comes from its principal), its latest signed checkpoint, and the public key.

export interface LogEntry {
  seq: number;
  at: string;
  lead_id: string;
  kind: ProviderFactKind;
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** One page of the provider's log: entries after seq `after`, oldest first; next_cursor: the seq to pass as after=. */
export async function readProviderLog(
  db: DB,
  providerId: string,
  page: { after: number; limit: number },
): Promise<{ data: LogEntry[]; next_cursor: string | null }> {
  const rows = await entriesAfter(db, providerId, page.after, page.limit + 1);
  const data = rows.slice(0, page.limit).map((r) => ({
    seq: Number(r.seq),
    at: r.at,
    lead_id: r.lead_id,
    kind: r.kind as ProviderFactKind,
    data: JSON.parse(r.data) as Record<string, unknown>,
    prev_hash: r.prev_hash,
    hash: r.hash,
  }));
  return { data, next_cursor: rows.length > page.limit ? String(data[data.length - 1].seq) : null };
}

/** The provider's latest checkpoint, signed now when its head has moved (an empty log: seq 0). */
export const latestProviderCheckpoint = (db: DB, providerId: string): Promise<Checkpoint> => checkpoint(db, providerId);

/** The key checkpoints are signed with. */
export async function checkpointPublicKey(db: DB) {
  const k = await signingKey(db);
  return { algorithm: 'Ed25519' as const, key_id: k.keyId, public_key_pem: k.publicPem, public_key_raw: k.publicRaw };
}
