import { Type } from 'typebox';
import type { FieldError } from '../http/errors.js';

// Deals on both sides, in one shape: what a traffic provider earns (a campaign's payout) and
// what a partner pays (its deal). Each is a price per delivered lead (cpl) or per FTD (cpa), with
// prices per lead country that replace it for those countries; a partner's CPL deal may carry a
// conversion-rate guarantee (CRG). Amounts are stored in integer cents and recorded on the lead
// when the event happens (delivery, FTD), so a price changed later does not rewrite history.

export const CURRENCY = 'USD';
/** Cents must fit a 32-bit integer column on PostgreSQL with room to spare. */
export const MAX_PRICE = 1_000_000;

export type PriceModel = 'cpl' | 'cpa';

/** As stored (JSON): campaigns.payout, partners.deal. */
export interface StoredPrice {
  model: PriceModel;
  amount_cents: number;
  currency: typeof CURRENCY;
  /** Cents per lead country, replacing amount_cents there. */
  by_country?: Record<string, number>;
  /** Partners' CPL deals only: the FTD rate promised (basis points: 1000 = 10 %) over a period. */
  crg?: { rate_bp: number; period: CrgPeriod } | null;
}

export type CrgPeriod = 'week' | 'month';

export const PriceModelSchema = Type.Union([Type.Literal('cpl'), Type.Literal('cpa')], {
  description: 'cpl: per delivered lead; cpa: per FTD (first deposit)',
});
export const Amount = (description: string) =>
  Type.Number({ minimum: 0, maximum: MAX_PRICE, description: `${description}, in ${CURRENCY}; at most 2 decimals` });
export const ByCountry = (description: string) =>
  Type.Record(Type.String({ pattern: '^[A-Z]{2}$', maxLength: 2 }), Amount('The price for leads from this country'), {
    maxProperties: 250,
    additionalProperties: false,
    description,
  });

/**
 * Decimal amount → integer cents. JSON Schema's multipleOf: 0.01 misjudges binary fractions
 * (1.1 / 0.01 is not an integer in floating point), so "at most 2 decimals" is checked here.
 */
export function toCents(amount: number): number | null {
  const cents = Math.round(amount * 100);
  return Math.abs(cents - amount * 100) < 1e-6 ? cents : null;
}

const TWO_DECIMALS = 'must have at most 2 decimals (cents)';

/** Amounts with more than 2 decimals in a price as sent (typed or not), named at `at`. */
export function priceErrors(p: unknown, at: string): FieldError[] {
  const errors: FieldError[] = [];
  if (p === null || typeof p !== 'object') return errors;
  const { amount, by_country } = p as { amount?: unknown; by_country?: unknown };
  if (typeof amount === 'number' && toCents(amount) === null)
    errors.push({ field: `${at}.amount`, message: TWO_DECIMALS });
  if (by_country !== null && typeof by_country === 'object') {
    for (const [code, v] of Object.entries(by_country)) {
      if (typeof v === 'number' && toCents(v) === null)
        errors.push({ field: `${at}.by_country.${code}`, message: TWO_DECIMALS });
    }
  }
  return errors;
}

/** A price as sent (checked by priceErrors first) → as stored. */
export function storedPrice(p: {
  model: PriceModel;
  amount: number;
  by_country?: Record<string, number>;
}): StoredPrice {
  const byCountry = Object.fromEntries(Object.entries(p.by_country ?? {}).map(([code, v]) => [code, toCents(v)!]));
  return { model: p.model, amount_cents: toCents(p.amount)!, currency: CURRENCY, by_country: byCountry };
}

/** A stored price as the API (and the audit log) show it: decimal amounts. */
export function shownPrice(p: StoredPrice) {
  return {
    model: p.model,
    amount: p.amount_cents / 100,
    currency: p.currency,
    by_country: Object.fromEntries(Object.entries(p.by_country ?? {}).map(([code, v]) => [code, v / 100])),
  };
}

/** What `price` pays for a lead from `country` when it pays per `model` (cents), else null. */
export function priceFor(price: StoredPrice | null, model: PriceModel, country: string): number | null {
  if (!price || price.model !== model) return null;
  return price.by_country?.[country] ?? price.amount_cents;
}

/** What a lead delivered under `deal` was sold for: its CPL price for the lead's country, and its guarantee (lead columns). */
export function saleAtDelivery(
  deal: StoredPrice | null,
  country: string,
): { revenue_cents?: number; crg_bp?: number | null } {
  const revenue = priceFor(deal, 'cpl', country);
  return revenue === null ? {} : { revenue_cents: revenue, crg_bp: deal!.crg?.rate_bp ?? null };
}

export const parsePrice = (json: string | null): StoredPrice | null =>
  json === null ? null : (JSON.parse(json) as StoredPrice);

/** A partner's deal as sent. */
export interface DealInput {
  model: PriceModel;
  amount: number;
  by_country?: Record<string, number>;
  crg?: { rate: number; period?: CrgPeriod } | null;
}

/** What is wrong with a deal as sent (typed or not): amounts, and a guarantee without a CPL price. */
export function dealErrors(d: unknown, at = 'deal'): FieldError[] {
  const errors = priceErrors(d, at);
  if (d === null || typeof d !== 'object') return errors;
  const { model, crg } = d as { model?: unknown; crg?: unknown };
  if (crg === null || typeof crg !== 'object') return errors;
  if (model === 'cpa')
    errors.push({
      field: `${at}.crg`,
      message: 'a conversion-rate guarantee goes with a CPL deal (a price per delivered lead)',
    });
  const rate = (crg as { rate?: unknown }).rate;
  if (typeof rate === 'number' && toCents(rate) === null)
    errors.push({ field: `${at}.crg.rate`, message: 'must have at most 2 decimals (e.g. 12.5)' });
  return errors;
}

/** A deal as sent (checked by dealErrors first) → as stored. */
export function storedDeal(d: DealInput): StoredPrice {
  return { ...storedPrice(d), crg: d.crg ? { rate_bp: toCents(d.crg.rate)!, period: d.crg.period ?? 'month' } : null };
}

/** A stored deal as the API and the audit log show it. */
export function shownDeal(d: StoredPrice) {
  return { ...shownPrice(d), crg: d.crg ? { rate: d.crg.rate_bp / 100, period: d.crg.period } : null };
}
