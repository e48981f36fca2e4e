import { createHmac, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Database, WebhooksTable } from '../../db/tables.js';
import { isEventType, type EventType } from '../../events/types.js';
import type { StoredEvent } from '../../events/dispatcher.js';
import { namesOf } from '../../db/names.js';
import type { Webhook } from './schemas.js';

// Webhooks: what is stored, how it is shown (the URL masked past its origin, the secret never),
// how a payload is signed (Standard Webhooks) and rendered for a chat.

const MASK = '••••';

/** The signing secret: whsec_ + base64 of 32 random bytes (the Standard Webhooks form). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The webhook-signature header: "v1," + base64 HMAC-SHA256 of "<id>.<timestamp>.<body>", keyed
 * with the secret's bytes (the base64 after "whsec_"), as the Standard Webhooks libraries verify.
 */
export function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** "https://hooks.example.com/••••c3Po": the origin, and a mask when there is more. */
export function maskUrl(url: string): string {
  const u = new URL(url);
  const rest = url.slice(u.origin.length);
  return rest === '' || rest === '/' ? u.origin : `${u.origin}/${MASK}${rest.length > 8 ? rest.slice(-4) : ''}`;
}

/** URL errors beyond the schema: http(s), a host, and not a mask sent back. */
export function urlProblem(url: string): string | null {
  if (url.includes(MASK) || url.includes(encodeURI(MASK)))
    return 'is a masked URL: send the full URL, or leave url out to keep the stored one';
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'is not a URL';
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'must be an http or https URL';
  if (u.username || u.password)
    return 'must not carry a user name or password (put them in the path or use the signature)';
  return null;
}

export function toWebhook(row: WebhooksTable): Webhook {
  return {
    id: row.id,
    name: row.name,
    url: maskUrl(row.url),
    format: row.format,
    telegram_chat_id: row.telegram_chat_id,
    event_types: storedEventTypes(row),
    status: row.status,
    disabled_reason: row.disabled_reason,
    failing_since: row.failing_since,
    owner_id: row.owner_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The webhook's rows in event_subscriptions: one per event type while active, none otherwise. */
/** The event types a stored webhook row subscribes to (a type no longer known is left out). */
export const storedEventTypes = (row: Pick<WebhooksTable, 'event_types'>) =>
  (JSON.parse(row.event_types) as string[]).filter(isEventType);

export async function syncSubscriptions(
  db: Kysely<Database>,
  row: Pick<WebhooksTable, 'id' | 'status' | 'event_types'>,
) {
  await db
    .deleteFrom('event_subscriptions')
    .where('destination_kind', '=', 'webhook')
    .where('destination_id', '=', row.id)
    .execute();
  if (row.status !== 'active') return;
  const types = storedEventTypes(row);
  if (!types.length) return;
  await db
    .insertInto('event_subscriptions')
    .values(
      types.map((t) => ({
        event_type: t,
        destination_kind: 'webhook' as const,
        destination_id: row.id,
        traffic_provider_id: null,
        campaign_id: null,
      })),
    )
    .execute();
}

/** Ends the webhook's pending deliveries (it was disabled or deleted). */
export async function cancelPending(db: Kysely<Database>, id: string, reason: string) {
  await db
    .updateTable('event_deliveries')
    .set({ state: 'cancelled', last_error: reason, lease_until: null, lease_token: null })
    .where('destination_kind', '=', 'webhook')
    .where('destination_id', '=', id)
    .where('state', '=', 'pending')
    .execute();
}

/** The JSON body: {type, timestamp, data}, data holding the event's ids and what it carries. */
export function eventBody(event: StoredEvent): Record<string, unknown> {
  const ids = {
    event_id: event.id,
    lead_id: event.lead_id,
    partner_id: event.partner_id,
    traffic_provider_id: event.traffic_provider_id,
    campaign_id: event.campaign_id,
  };
  return { type: event.type, timestamp: event.occurred_at, data: { ...ids, ...event.data } };
}

export interface Names {
  partner: string | null;
  campaign: string | null;
  provider: string | null;
}

/** "daily cap", "hourly FTD cap in a flow", "daily cap for DE in a flow": a cap alert's cap, from its kind (caps.ts). */
function capNameOf(d: Record<string, string | number | null>): string {
  const kind = String(d.cap_kind ?? 'daily');
  const window = kind.endsWith('hourly') ? 'hourly' : kind.endsWith('total') ? 'total' : 'daily';
  return `${window}${d.counts === 'ftds' ? ' FTD' : ''} cap${d.country ? ` for ${d.country}` : ''}${kind.startsWith('flow_') ? ' in a flow' : ''}`;
}

/** One line an operator reads (a chat message, a notification). */
export function describeEvent(event: StoredEvent, names: Names): string {
  const d = event.data as Record<string, string | number | null>;
  const lead = `Lead ${event.lead_id ?? ''}`;
  const where = [d.country, names.campaign && `campaign ${names.campaign}`, names.provider && `from ${names.provider}`]
    .filter(Boolean)
    .join(', ');
  const leadLine = (what: string) => `${lead} ${what}${where ? ` (${where})` : ''}`;
  const capName = capNameOf(d);
  const texts: Record<EventType, () => string> = {
    'lead.received': () => leadLine('received'),
    'lead.delivered': () => leadLine(`delivered${names.partner ? ` to ${names.partner}` : ''}`),
    'lead.rejected': () => leadLine(d.status === 'duplicate' ? 'rejected as a duplicate' : 'rejected'),
    'lead.failed': () => leadLine('failed'),
    'lead.ftd': () => leadLine(`converted: FTD${names.partner ? ` at ${names.partner}` : ''}`),
    'lead.sale_status_changed': () =>
      leadLine(`sale status ${d.previous_sale_status ?? '(none)'} → ${d.sale_status ?? '(none)'}`),
    'partner.cap_nearly_full': () => `${names.partner ?? 'A partner'}: ${capName} at ${d.used} of ${d.cap} (90 %)`,
    'partner.cap_full': () => `${names.partner ?? 'A partner'}: ${capName} full (${d.used} of ${d.cap})`,
    'partner.failing': () =>
      d.paused
        ? `${names.partner ?? 'A partner'} paused after ${d.failures} failed calls in a row (${d.last_reason ?? 'no reason'})`
        : `${names.partner ?? 'A partner'}: ${d.failures} calls in a row failed (${d.last_reason ?? 'no reason'})`,
    'traffic_provider.silent': () =>
      `${names.provider ?? 'A traffic provider'} sent no lead for ${d.hours} hours (last at ${d.last_lead_at ?? 'never'})`,
    'partner.pull_failed': () =>
      `${names.partner ?? 'A partner'}: status pull failed ${d.failures} times in a row (${d.error ?? 'unknown error'})`,
    'webhook.disabled': () => `Webhook ${d.name ?? ''} disabled: ${d.reason ?? ''}`,
  };
  return texts[event.type]();
}

/**
 * Slack reads "<…>" in a message as a link with any label ("<https://x|Sign in>") or a ping
 * ("<!channel>") and "&" as the start of an escape; a sale status or a name is someone else's
 * text, so it must arrive as text: Slack's rule is to escape exactly these three. The line's own
 * wording holds none of them, so escaping the line escapes what was put into it.
 */
export const slackText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * The body a webhook of this format is sent for the event. Telegram gets no parse_mode: its
 * plain text has no markup (HTML or Markdown would need their own escaping), so nothing in it
 * becomes a disguised link.
 */
export function renderBody(
  format: WebhooksTable['format'],
  chatId: string | null,
  event: StoredEvent,
  names: Names,
): string {
  if (format === 'json') return JSON.stringify(eventBody(event));
  const text = `[Leadgate] ${describeEvent(event, names)}`;
  return JSON.stringify(format === 'slack' ? { text: slackText(text) } : { chat_id: chatId, text });
}

export const NO_NAMES: Names = { partner: null, campaign: null, provider: null };

/** The names the events refer to: three queries for any number of events (db/names.ts). */
export async function eventNames(db: DB, events: StoredEvent[]): Promise<(event: StoredEvent) => Names> {
  const ids = (pick: (e: StoredEvent) => string | null) => [...new Set(events.flatMap((e) => pick(e) ?? []))];
  const [partners, campaigns, providers] = await Promise.all([
    namesOf(
      db,
      'partner',
      ids((e) => e.partner_id),
    ),
    namesOf(
      db,
      'campaign',
      ids((e) => e.campaign_id),
    ),
    namesOf(
      db,
      'traffic_provider',
      ids((e) => e.traffic_provider_id),
    ),
  ]);
  const name = (map: Map<string, string>, id: string | null) => (id ? (map.get(id) ?? null) : null);
  return (e) => ({
    partner: name(partners, e.partner_id),
    campaign: name(campaigns, e.campaign_id),
    provider: name(providers, e.traffic_provider_id),
  });
}
