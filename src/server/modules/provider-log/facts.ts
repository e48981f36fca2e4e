import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { providerFact, recordProviderFacts, type PendingFact } from '../../db/provider-facts.js';
import { ftdVisibleAt, readPortalSettings } from '../traffic-providers/portal-settings.js';

// The provider-log facts of a conversion (conversions/apply.ts, the one way a sale status or FTD
// is recorded), in its transaction. An FTD, and the payout it brings, become visible after the
// provider's hold (ftdVisibleAt). An FTD reversed while still held is withdrawn unseen: its
// pending facts are deleted and no ftd_reversed is written, so the provider never learns of
// either; reversed after the hold, it is a new entry (ftd_reversed), never an edit.

interface Lead {
  id: string;
  traffic_provider_id: string;
  ftd_at: string | null;
  cost_cents: number | string;
}
interface Patch {
  status?: 'delivered';
  sale_status?: string;
  ftd_at?: string | null;
  cost_cents?: number;
}

export async function conversionFacts(tx: DB, lead: Lead, patch: Patch): Promise<void> {
  const fact = (kind: Parameters<typeof providerFact>[2], data: Record<string, unknown>, visibleAt?: string) =>
    providerFact(lead.traffic_provider_id, lead.id, kind, data, visibleAt);
  const facts: PendingFact[] = [];
  if (patch.status === 'delivered') facts.push(fact('accepted', {}));
  if (patch.sale_status !== undefined) facts.push(fact('sale_status', { sale_status: patch.sale_status }));
  let payoutVisibleAt: string | undefined;
  let payoutShown = true;
  if (patch.ftd_at) {
    const settings = await readPortalSettings(tx, lead.traffic_provider_id);
    payoutVisibleAt = settings ? ftdVisibleAt(settings, nowIso()) : undefined;
    facts.push(fact('ftd', { ftd_at: patch.ftd_at }, payoutVisibleAt));
  } else if (patch.ftd_at === null && lead.ftd_at !== null) {
    // Withdrawn during the hold: the provider saw neither the FTD nor its payout.
    payoutShown = !(await withdrawHeld(tx, lead.id));
    if (payoutShown) facts.push(fact('ftd_reversed', { ftd_at: lead.ftd_at }));
  }
  if (payoutShown && patch.cost_cents !== undefined && patch.cost_cents !== Number(lead.cost_cents))
    facts.push(fact('payout', { payout_cents: patch.cost_cents }, payoutVisibleAt));
  await recordProviderFacts(tx, facts);
}

/** Deletes a lead's FTD (and its payout) still held; whether there was one. */
async function withdrawHeld(tx: DB, leadId: string): Promise<boolean> {
  const res = await tx
    .deleteFrom('provider_log_pending')
    .where('lead_id', '=', leadId)
    .where('kind', 'in', ['ftd', 'payout'])
    .where('visible_at', '>', nowIso())
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
