import type { Insertable } from 'kysely';
import { compiledOnce } from './compiled.js';
import type { DB } from './database.js';
import { nowIso } from './ids.js';
import type { ProviderLogPendingTable } from './tables.js';

// The facts a traffic provider is shown about its leads (issue 27), written to
// provider_log_pending in the transaction that records each, so none is lost; the provider-log
// job (modules/provider-log/chain.ts) chains them into the provider's log once visible. Kept
// here, below the features, because intake, the routing engine and conversions all record them.
// One small insert each: the hashing happens off the hot path.

export const PROVIDER_FACT_KINDS = [
  'received',
  'accepted',
  'refused',
  'sale_status',
  'ftd',
  'ftd_reversed',
  'payout',
] as const;
export type ProviderFactKind = (typeof PROVIDER_FACT_KINDS)[number];

/** What a provider is told when no partner took its lead (never a partner's name or answer). */
export const NOT_PLACED = 'no buyer accepted the lead';

export type PendingFact = Insertable<ProviderLogPendingTable>;

/** A pending fact about lead `leadId` of provider `providerId`, visible at `visibleAt` (default: now). */
export function providerFact(
  providerId: string,
  leadId: string,
  kind: ProviderFactKind,
  data: Record<string, unknown>,
  visibleAt?: string,
): PendingFact {
  const recorded_at = nowIso();
  return {
    traffic_provider_id: providerId,
    lead_id: leadId,
    kind,
    data: JSON.stringify(data),
    recorded_at,
    visible_at: visibleAt ?? recorded_at,
  };
}

/** One fact's insert, built once (intake and delivery write one per lead: compiled.ts). */
const insertFact = compiledOnce(
  (
    db: DB,
    traffic_provider_id: string,
    lead_id: string,
    kind: string,
    data: string,
    recorded_at: string,
    visible_at: string,
  ) =>
    db.insertInto('provider_log_pending').values({ traffic_provider_id, lead_id, kind, data, recorded_at, visible_at }),
);

/** Writes facts in the caller's transaction (many at once in multi-row inserts: an import's chunk). */
export async function recordProviderFacts(db: DB, facts: PendingFact[]): Promise<void> {
  if (facts.length > 2) {
    for (let i = 0; i < facts.length; i += 200)
      await db
        .insertInto('provider_log_pending')
        .values(facts.slice(i, i + 200).map((f) => ({ ...f, visible_at: f.visible_at ?? f.recorded_at })))
        .execute();
    return;
  }
  for (const f of facts)
    await insertFact(
      db,
      f.traffic_provider_id,
      f.lead_id,
      f.kind,
      f.data,
      f.recorded_at,
      f.visible_at ?? f.recorded_at,
    );
}
