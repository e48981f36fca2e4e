import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import type { ConversionSource } from '../../db/tables.js';
import { countFtd } from '../../distribution/caps.js';
import { parsePrice, priceFor, type PriceModel, type StoredPrice } from '../../distribution/prices.js';
import { cancelHeldFtdDeliveries } from '../../events/hold.js';
import { conversionFacts } from '../provider-log/facts.js';

// What a partner reports about a lead after delivery (a sale status, an FTD with its revenue),
// applied the same way whichever way it came: a postback, a status pull, an operator. The sale
// status is written only when it differs; the first FTD reported wins, once per lead, and a
// campaign paying per FTD (cpa) records its payout then, a partner's CPA deal its price (a partner
// with no deal: the revenue it reports), and a flow target whose caps count FTDs
// counts it. Each change goes into the lead's status
// history with its source. The caller holds the lead (PostgreSQL: FOR UPDATE) in its transaction.

export interface Conversion {
  sale_status?: string;
  /** true: an FTD (the first one wins); false from an operator: the FTD recorded is reversed (a chargeback). */
  ftd?: boolean;
  /** ISO UTC; default: now. */
  ftd_at?: string;
  revenue_cents?: number;
}

export interface LeadForConversion {
  id: string;
  traffic_provider_id: string;
  campaign_id: string | null;
  partner_id: string | null;
  flow_id: string | null;
  country: string;
  sale_status: string | null;
  ftd_at: string | null;
  revenue_cents: number | string;
  cost_cents: number | string;
}

export const CONVERSION_LEAD_COLUMNS = [
  'id',
  'traffic_provider_id',
  'campaign_id',
  'partner_id',
  'flow_id',
  'country',
  'sale_status',
  'ftd_at',
  'revenue_cents',
  'cost_cents',
] as const;

export type LeadPatch = Partial<{
  status: 'delivered';
  partner_id: string;
  delivered_at: string;
  reason: null;
  sale_status: string;
  ftd_at: string | null;
  revenue_cents: number;
  cost_cents: number;
  crg_bp: number | null;
  status_updated_at: string;
}>;

export interface Applied {
  changed: boolean;
  patch: LeadPatch;
  /** For the audit log: what changed, from and to. */
  changes: Record<string, unknown>;
  /** What was reported but not applied, in words for the partner or operator. */
  notes: string[];
}

/** The campaign's payout for a lead from `country`, in cents, when it pays per `model`. */
export async function payoutCents(
  tx: DB,
  campaignId: string | null,
  model: PriceModel,
  country: string,
): Promise<number | null> {
  if (!campaignId) return null;
  const c = await tx.selectFrom('campaigns').select('payout').where('id', '=', campaignId).executeTakeFirst();
  return priceFor(parsePrice(c?.payout ?? null), model, country);
}

/** The deal of the partner a lead went to, or null. */
export async function dealOf(tx: DB, partnerId: string | null): Promise<StoredPrice | null> {
  if (!partnerId) return null;
  const p = await tx.selectFrom('partners').select('deal').where('id', '=', partnerId).executeTakeFirst();
  return parsePrice(p?.deal ?? null);
}

/**
 * An FTD's revenue: with a CPA deal, its price for the lead's country; with a CPL deal, nothing
 * more (the lead was paid for when delivered); with no deal, what the partner reported.
 */
function ftdRevenue(
  deal: StoredPrice | null,
  reported: number | undefined,
  country: string,
  notes: string[],
): number | undefined {
  if (!deal) return reported;
  const price = priceFor(deal, 'cpa', country);
  if (price === null) {
    if (reported !== undefined)
      notes.push(
        'The partner is paid per delivered lead (CPL deal): the revenue reported with the FTD is not recorded.',
      );
    return undefined;
  }
  if (reported !== undefined && reported !== price)
    notes.push(`Revenue is the CPA deal's price (${price / 100}), not the ${reported / 100} reported.`);
  return price;
}

/** Applies `c` to `lead` (with `base`, changes already decided by the caller), writes the lead and its history. */
export async function applyConversion(
  tx: DB,
  lead: LeadForConversion,
  c: Conversion,
  source: ConversionSource,
  base: Applied = { changed: false, patch: {}, changes: {}, notes: [] },
): Promise<Applied> {
  const { patch, changes, notes } = base;
  if (c.sale_status !== undefined && c.sale_status !== lead.sale_status) {
    patch.sale_status = c.sale_status;
    changes.sale_status = { from: lead.sale_status, to: c.sale_status };
  }
  if (c.ftd === true && lead.ftd_at === null) {
    patch.ftd_at = c.ftd_at ?? nowIso();
    changes.ftd_at = patch.ftd_at;
    const partnerId = patch.partner_id ?? lead.partner_id;
    const revenue = ftdRevenue(await dealOf(tx, partnerId), c.revenue_cents, lead.country, notes);
    if (revenue !== undefined) {
      patch.revenue_cents = revenue;
      changes.revenue = { from: Number(lead.revenue_cents) / 100, to: revenue / 100 };
    }
    const cost = await payoutCents(tx, lead.campaign_id, 'cpa', lead.country);
    if (cost !== null) {
      patch.cost_cents = cost;
      changes.cost = { from: Number(lead.cost_cents) / 100, to: cost / 100 };
    }
    // A cap counting FTDs counts this one, in the windows of when it happened (never later than now).
    await countFtd(tx, { ...lead, partner_id: partnerId }, Math.min(Date.parse(patch.ftd_at), Date.now()));
  } else if (c.ftd === true) {
    notes.push(
      `An FTD is already recorded for this lead (at ${lead.ftd_at}); the first one reported wins, so ftd, ftd_at and revenue change nothing.`,
    );
  } else if (c.ftd === false && lead.ftd_at !== null && source === 'operator') {
    await reverseFtd(tx, lead, patch, changes, notes);
  } else {
    if (c.ftd === false && lead.ftd_at !== null) notes.push('An FTD already recorded is not withdrawn by ftd=false.');
    if (c.ftd_at !== undefined || c.revenue_cents !== undefined)
      notes.push('ftd_at and revenue are recorded only with ftd=true; ignored.');
  }
  const changed = Object.keys(patch).length > 0;
  if (changed) {
    const now = nowIso();
    patch.status_updated_at = now;
    await tx.updateTable('leads').set(patch).where('id', '=', lead.id).execute();
    await conversionFacts(tx, lead, patch);
    if (patch.sale_status !== undefined || patch.ftd_at) {
      await tx
        .insertInto('lead_status_history')
        .values({
          lead_id: lead.id,
          at: now,
          source,
          sale_status: patch.sale_status ?? lead.sale_status,
          previous_sale_status: lead.sale_status,
          ftd_at: patch.ftd_at ?? null,
        })
        .execute();
    }
  }
  return { changed, patch, changes, notes };
}

/**
 * An operator withdraws the FTD recorded (a chargeback): ftd_at cleared, and what the FTD brought
 * taken back: the campaign's CPA payout (the lead's cost back to 0) and the revenue the FTD set (a
 * CPA deal's price or the partner's report; a CPL deal's stays). Caps that counted it keep it.
 * Deliveries of its FTD still held for the provider are cancelled (the provider-log facts: facts.ts).
 */
async function reverseFtd(
  tx: DB,
  lead: LeadForConversion,
  patch: LeadPatch,
  changes: Record<string, unknown>,
  notes: string[],
) {
  patch.ftd_at = null;
  changes.ftd_at = { from: lead.ftd_at, to: null };
  if ((await payoutCents(tx, lead.campaign_id, 'cpa', lead.country)) !== null && Number(lead.cost_cents) !== 0) {
    patch.cost_cents = 0;
    changes.cost = { from: Number(lead.cost_cents) / 100, to: 0 };
  }
  const deal = await dealOf(tx, lead.partner_id);
  if ((!deal || priceFor(deal, 'cpa', lead.country) !== null) && Number(lead.revenue_cents) !== 0) {
    patch.revenue_cents = 0;
    changes.revenue = { from: Number(lead.revenue_cents) / 100, to: 0 };
  }
  await cancelHeldFtdDeliveries(tx, lead.id);
  notes.push('The FTD is reversed; caps that counted it keep it.');
}
