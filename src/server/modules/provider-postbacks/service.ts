import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { fixedOrigin, originProblem } from '../../distribution/template.js';
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
    value: (e) => text(e.data.status),
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

const MACRO = /\{([a-z_0-9]+)\}/g;

/** The URL for an event: each macro replaced by its URL-encoded value. */
export function renderPostbackUrl(template: string, event: Pick<StoredEvent, 'type' | 'lead_id' | 'data'>): string {
  return template.replace(MACRO, (whole, name: string) => {
    if (name === 'event') return encodeURIComponent(event.type);
    const macro = MACROS[name];
    return macro ? encodeURIComponent(macro.value(event)) : whole;
  });
}

/** The template with every macro replaced by `value`: how fixedOrigin sees where it sends. */
const fillAll = (template: string) => (value: string) =>
  template.replace(MACRO, (whole, name: string) => (MACROS[name] ? value : whole));

/** What is wrong with a template, or null: unknown macros, a URL that does not parse once filled, a macro in its scheme, host or port. */
export function templateProblem(template: string): string | null {
  const unknown = [...template.matchAll(MACRO)].map((m) => m[1]).filter((n) => !MACROS[n]);
  if (unknown.length)
    return `unknown macro${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => `{${n}}`).join(', ')}; known: ${MACRO_LIST}`;
  const fixed = fixedOrigin(fillAll(template));
  return 'problem' in fixed ? fixed.problem : null;
}

/**
 * The URL an event calls, or why it is not called: checked again when sent, since a template
 * stored before the save-time check could let a lead's sub id choose the tracker's host.
 */
export function postbackUrl(
  template: string,
  event: Pick<StoredEvent, 'type' | 'lead_id' | 'data'>,
): { url: string } | { refused: string } {
  const url = renderPostbackUrl(template, event);
  const refused = originProblem(fixedOrigin(fillAll(template)), url);
  return refused ? { refused: `not sent: ${refused}; save the postback again` } : { url };
}

/** A lead as a test postback shows it. */
export const SAMPLE: Pick<StoredEvent, 'type' | 'lead_id' | 'data'> = {
  type: 'lead.ftd',
  lead_id: '00000000-0000-7000-8000-000000000000',
  data: {
    status: 'delivered',
    sale_status: 'Deposited',
    cost_cents: 1250,
    country: 'DE',
    campaign_id: 'sample-campaign',
    ftd_at: '2026-01-01T12:00:00.000Z',
    sub_id1: 'click-123',
    sub_id2: null,
    sub_id3: null,
    sub_id4: null,
    sub_id5: null,
  },
};

/**
 * The provider's rows in event_subscriptions: per event type, one for all campaigns when it has
 * a provider-wide postback for it, else one per campaign with its own. Never two that match one event.
 */
export async function syncPostbackSubscriptions(db: Kysely<Database>, providerId: string) {
  await db
    .deleteFrom('event_subscriptions')
    .where('destination_kind', '=', 'postback')
    .where('destination_id', '=', providerId)
    .execute();
  const rows = await db
    .selectFrom('provider_postbacks')
    .select(['event_type', 'campaign_id'])
    .where('traffic_provider_id', '=', providerId)
    .execute();
  const wide = new Set(rows.filter((r) => r.campaign_id === null).map((r) => r.event_type));
  const subs = rows
    .filter((r) => r.campaign_id === null || !wide.has(r.event_type))
    .map((r) => ({
      event_type: r.event_type,
      destination_kind: 'postback' as const,
      destination_id: providerId,
      traffic_provider_id: providerId,
      campaign_id: r.campaign_id,
    }));
  if (subs.length) await db.insertInto('event_subscriptions').values(subs).execute();
}

export type PostbackRow = { traffic_provider_id: string; campaign_id: string | null; event_type: string; url: string };

/** The postbacks of these providers: what templateFor chooses from. */
export const postbackRows = (db: Kysely<Database>, providerIds: string[]): Promise<PostbackRow[]> =>
  db
    .selectFrom('provider_postbacks')
    .select(['traffic_provider_id', 'campaign_id', 'event_type', 'url'])
    .where('traffic_provider_id', 'in', providerIds)
    .execute();

/** The template for an event of a lead: its campaign's own, else the provider-wide one. */
export function templateFor(
  rows: PostbackRow[],
  providerId: string,
  eventType: string,
  campaignId: string | null,
): string | null {
  const mine = rows.filter((r) => r.traffic_provider_id === providerId && r.event_type === eventType);
  return (
    (mine.find((r) => campaignId !== null && r.campaign_id === campaignId) ?? mine.find((r) => r.campaign_id === null))
      ?.url ?? null
  );
}
