// What a traffic provider's portal shows (issue 27), set by operators per provider: whether
// sale statuses are shown (mapped from each partner's own words to a small vocabulary, so no
// partner's wording or name leaks), whether the payout is shown, whether the contacts it sent are
// shown (masked), and the FTD hold: an FTD reaches the provider (portal, its log, postbacks,
// provider-scoped webhooks) only this many hours after it was recorded.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';

/** The words a provider may be shown for a lead's sale status. */
export const PROVIDER_SALE_STATUSES = [
  'new',
  'in_progress',
  'no_answer',
  'callback',
  'not_interested',
  'invalid',
  'converted',
] as const;
export type ProviderSaleStatus = (typeof PROVIDER_SALE_STATUSES)[number];

export interface PortalSettings {
  portal_enabled: boolean;
  show_sale_status: boolean;
  show_payout: boolean;
  show_contacts: boolean;
  ftd_hold_hours: number;
  /** partner's word (lower case, trimmed) → provider word; a word not listed reads 'in_progress'. */
  sale_status_map: Record<string, ProviderSaleStatus>;
}

export const DEFAULT_PORTAL_SETTINGS: PortalSettings = Object.freeze({
  portal_enabled: true,
  show_sale_status: false,
  show_payout: true,
  show_contacts: false,
  ftd_hold_hours: 0,
  sale_status_map: {},
});

const isProviderWord = (w: unknown): w is ProviderSaleStatus =>
  typeof w === 'string' && (PROVIDER_SALE_STATUSES as readonly string[]).includes(w);

/** The sale status a provider is shown for a partner's word, or null when statuses are hidden or none is set. */
export function providerSaleStatus(settings: PortalSettings, partnerWord: string | null): ProviderSaleStatus | null {
  if (!settings.show_sale_status || partnerWord === null || partnerWord.trim() === '') return null;
  return settings.sale_status_map[partnerWord.trim().toLowerCase()] ?? 'in_progress';
}

/** When an FTD recorded at `ftdAt` becomes visible to the provider (ISO), given the hold. */
export const ftdVisibleAt = (settings: Pick<PortalSettings, 'ftd_hold_hours'>, ftdAt: string) =>
  new Date(Date.parse(ftdAt) + settings.ftd_hold_hours * 3_600_000).toISOString();

type Row = {
  portal_enabled: number;
  portal_sale_status: number;
  portal_payout: number;
  portal_contacts: number;
  ftd_hold_hours: number;
  sale_status_map: string;
};

export function toPortalSettings(r: Row): PortalSettings {
  const parsed = JSON.parse(r.sale_status_map) as Record<string, unknown>;
  const map: Record<string, ProviderSaleStatus> = {};
  for (const [k, v] of Object.entries(parsed)) if (isProviderWord(v)) map[k] = v;
  return {
    portal_enabled: Number(r.portal_enabled) === 1,
    show_sale_status: Number(r.portal_sale_status) === 1,
    show_payout: Number(r.portal_payout) === 1,
    show_contacts: Number(r.portal_contacts) === 1,
    ftd_hold_hours: Number(r.ftd_hold_hours),
    sale_status_map: map,
  };
}

/** One provider's portal settings (undefined: no such provider). */
export async function readPortalSettings(db: Kysely<Database>, providerId: string) {
  const r = await db
    .selectFrom('traffic_providers')
    .select([
      'portal_enabled',
      'portal_sale_status',
      'portal_payout',
      'portal_contacts',
      'ftd_hold_hours',
      'sale_status_map',
    ])
    .where('id', '=', providerId)
    .executeTakeFirst();
  return r ? toPortalSettings(r) : undefined;
}
