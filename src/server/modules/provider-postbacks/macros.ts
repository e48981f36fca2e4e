import type { StoredEvent } from '../../events/dispatcher.js';

// A traffic provider's postbacks: the S2S convention of affiliate trackers. A URL template per
// lead event, with macros in braces filled from the lead as the event saw it, URL-encoded. The
// macros are what a provider may know of its own lead: never a partner, a contact or a reason.

export const POSTBACK_EVENTS = [
  'lead.received',
  'lead.delivered',
  'lead.rejected',
  'lead.failed',
  'lead.ftd',
  'lead.sale_status_changed',
] as const;
export type PostbackEvent = (typeof POSTBACK_EVENTS)[number];
export const isPostbackEvent = (t: string): t is PostbackEvent => (POSTBACK_EVENTS as readonly string[]).includes(t);

type Snapshot = Record<string, unknown>;
const text = (v: unknown) => (v === null || v === undefined ? '' : String(v));

export const MACROS: Record<
  string,
  { description: string; value: (e: { lead_id: string | null; data: Snapshot }) => string }
> = {
  lead_id: { description: "Leadgate's lead id", value: (e) => text(e.lead_id) },
  ...Object.fromEntries(
    [1, 2, 3, 4, 5].map((i) => [
      `sub_id${i}`,
      {
        description: `The sub id ${i} the provider sent`,
        value: (e: { data: Snapshot }) => text(e.data[`sub_id${i}`]),
      },
    ]),
  ),
  status: {
    description: 'The lead status: pending, delivered, rejected, duplicate or failed',
    // A lead held for review is pending to its provider (the review queue is the operator's).
    value: (e) => text(e.data.status === 'held' ? 'pending' : e.data.status),
  },
  sale_status: { description: 'The sale status (empty when none)', value: (e) => text(e.data.sale_status) },
  payout: {
    description: "The provider's payout for the lead, in currency units (e.g. 12.50)",
    value: (e) => (Number(e.data.cost_cents ?? 0) / 100).toFixed(2),
  },
  country: { description: 'ISO country code', value: (e) => text(e.data.country) },
  campaign_id: { description: 'The campaign id', value: (e) => text(e.data.campaign_id) },
  ftd_at: {
    description: 'When the lead made its first deposit (ISO 8601; empty when none)',
    value: (e) => text(e.data.ftd_at),
  },
  event: { description: 'The event: lead.delivered, lead.ftd …', value: () => '' },
};
export const MACRO_LIST = Object.keys(MACROS)
  .map((m) => `{${m}}`)
  .join(', ');

export const MACRO = /\{([a-z_0-9]+)\}/g;

/** The URL for an event: each macro replaced by its URL-encoded value. */
export function renderPostbackUrl(template: string, event: Pick<StoredEvent, 'type' | 'lead_id' | 'data'>): string {
  return template.replace(MACRO, (whole, name: string) => {
    if (name === 'event') return encodeURIComponent(event.type);
    const macro = MACROS[name];
    return macro ? encodeURIComponent(macro.value(event)) : whole;
  });
}
