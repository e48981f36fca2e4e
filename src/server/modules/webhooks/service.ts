import { createHmac, randomBytes } from 'node:crypto';
import type { DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import type { WebhooksTable } from '../../db/tables.js';
import { ALL_EVENT_TYPES, EVENT_TYPES, isEventType, type EventType } from '../../events/types.js';
import type { StoredEvent } from '../../events/dispatcher.js';
import { safeEvents } from '../../events/safe-events.js';
import { namesOf } from '../../db/names.js';
import { invalid, notFound, type FieldError } from '../../http/errors.js';
import { checkDestinationUrl } from '../../outbound/guard.js';
import { principalOf } from '../../types.js';
import { seal, unseal } from '../../secrets/box.js';
import { audit, type Actor } from '../audit/service.js';
import { assertCanRead } from './access.js';
import {
  cancelPending,
  deleteWebhookRows,
  findWebhookRow,
  insertWebhookRow,
  listWebhookRows,
  replaceSubscriptions,
  updateWebhookRow,
} from './queries.js';
import type { CreateWebhook, UpdateWebhook, Webhook } from './schemas.js';

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

/** The signed POST of `body` to a webhook (real events and the test event alike), webhook-id `id`; `secret` as stored (sealed). */
export function signedPost(hook: { url: string; secret: string }, id: string, body: string) {
  const timestamp = Math.floor(Date.now() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'Leadgate-Webhooks',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(unseal(hook.secret, 'webhook-secret'), id, timestamp, body),
  };
  return { method: 'POST' as const, url: hook.url, headers, body };
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

/** The event types a stored webhook row subscribes to (a type no longer known is left out). */
export const storedEventTypes = (row: Pick<WebhooksTable, 'event_types'>) =>
  (JSON.parse(row.event_types) as string[]).filter(isEventType);

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
    'lead.autologin_opened': () =>
      leadLine(
        `autologin link opened (${d.opens ?? 1} in all${(d as Record<string, unknown>).redirected === false ? ', refused: single use' : ''})`,
      ),
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
    'review_queue.waiting': () =>
      `${d.held} lead${d.held === 1 ? '' : 's'} from ${names.provider ?? 'a traffic provider'} held for review, ` +
      `the oldest for more than ${d.minutes} minutes`,
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

// The use cases: what each route does, in one transaction with its audit record.

const find = async (db: DB, id: string) => (await findWebhookRow(db, id)) ?? notFound('webhook');

/** The webhook's rows in event_subscriptions: one per event type while active, none otherwise. */
export const syncSubscriptions = (db: DB, row: Pick<WebhooksTable, 'id' | 'status' | 'event_types'>) =>
  replaceSubscriptions(db, row.id, row.status === 'active' ? storedEventTypes(row) : []);

/** URL and chat id checks beyond the schema, named by field. */
function check(
  b: { url?: string; format?: string; telegram_chat_id?: string | null },
  format: string,
  chatId: string | null,
  allowedNetworks: readonly string[],
) {
  const errors: FieldError[] = [];
  if (b.url !== undefined) {
    const problem = urlProblem(b.url) ?? checkDestinationUrl(b.url, allowedNetworks)?.message ?? null;
    if (problem) errors.push({ field: 'url', message: problem });
  }
  if (format === 'telegram' && !chatId)
    errors.push({ field: 'telegram_chat_id', message: 'is required for the telegram format' });
  if (format !== 'telegram' && chatId)
    errors.push({ field: 'telegram_chat_id', message: 'is only for the telegram format' });
  if (errors.length) invalid(errors);
}

export const listWebhooks = async (db: DB) => (await listWebhookRows(db)).map(toWebhook);

export const getWebhook = async (db: DB, id: string) => toWebhook(await find(db, id));

/** A new webhook owned by the actor, who must be allowed to read every event type; its secret shown once. */
export async function createWebhook(db: DB, actor: Actor, b: CreateWebhook, allowedNetworks: readonly string[]) {
  const format = b.format ?? 'json';
  check(b, format, b.telegram_chat_id ?? null, allowedNetworks);
  const principal = principalOf(actor);
  assertCanRead(principal, b.event_types);
  const now = nowIso();
  const secret = newSecret();
  const row = {
    id: newId(),
    name: b.name.trim(),
    url: b.url,
    format,
    telegram_chat_id: b.telegram_chat_id ?? null,
    event_types: JSON.stringify(b.event_types),
    secret: seal(secret, 'webhook-secret'),
    status: 'active' as const,
    disabled_reason: null,
    failing_since: null,
    created_at: now,
    updated_at: now,
    owner_id: principal.operator.id,
  };
  await db.transaction().execute(async (tx) => {
    await insertWebhookRow(tx, row);
    await syncSubscriptions(tx, row);
    await audit(tx, actor, {
      action: 'webhook.created',
      target_type: 'webhook',
      target_id: row.id,
      details: { name: row.name, url: toWebhook(row).url, format, event_types: b.event_types },
    });
  });
  return { ...toWebhook(row), secret };
}

/** Changes the fields sent; disabling cancels pending deliveries. */
export async function updateWebhook(
  db: DB,
  actor: Actor,
  id: string,
  b: UpdateWebhook,
  allowedNetworks: readonly string[],
) {
  return db.transaction().execute(async (tx) => {
    const current = await find(tx, id);
    const format = b.format ?? current.format;
    const chatId =
      b.telegram_chat_id !== undefined ? b.telegram_chat_id : format === 'telegram' ? current.telegram_chat_id : null;
    check(b, format, chatId, allowedNetworks);
    // Whoever redirects a webhook reads what it sends from then on: they must be allowed to, and it sends as them.
    const redirects =
      b.url !== undefined ||
      b.format !== undefined ||
      b.telegram_chat_id !== undefined ||
      b.event_types !== undefined ||
      b.status === 'active';
    const principal = principalOf(actor);
    if (redirects) assertCanRead(principal, b.event_types ?? storedEventTypes(current));
    const reactivated = b.status === 'active' && current.status !== 'active';
    const patch = {
      ...(b.name !== undefined && { name: b.name.trim() }),
      ...(b.url !== undefined && { url: b.url }),
      format,
      telegram_chat_id: chatId,
      ...(b.event_types && { event_types: JSON.stringify(b.event_types) }),
      ...(b.status && { status: b.status }),
      ...(b.status && { disabled_reason: null }),
      ...(reactivated && { failing_since: null }),
      ...(redirects && { owner_id: principal.operator.id }),
      updated_at: nowIso(),
    };
    const row = { ...current, ...patch };
    await updateWebhookRow(tx, current.id, patch);
    await syncSubscriptions(tx, row);
    if (row.status !== 'active' && current.status === 'active')
      await cancelPending(tx, current.id, 'the webhook was disabled');
    const { url: _url, ...changed } = b;
    await audit(tx, actor, {
      action: 'webhook.updated',
      target_type: 'webhook',
      target_id: current.id,
      details: { ...changed, ...(b.url !== undefined && { url: toWebhook(row).url }) },
    });
    return toWebhook(row);
  });
}

/** The webhook with its subscriptions and delivery log. */
export async function deleteWebhook(db: DB, actor: Actor, id: string) {
  await db.transaction().execute(async (tx) => {
    const current = await find(tx, id);
    await deleteWebhookRows(tx, current.id);
    await audit(tx, actor, {
      action: 'webhook.deleted',
      target_type: 'webhook',
      target_id: current.id,
      details: { name: current.name },
    });
  });
}

/** A new signing secret, shown once. */
export async function rotateWebhookSecret(db: DB, actor: Actor, id: string) {
  const current = await find(db, id);
  const secret = newSecret();
  const row = { ...current, secret: seal(secret, 'webhook-secret'), updated_at: nowIso() };
  await db.transaction().execute(async (tx) => {
    await updateWebhookRow(tx, current.id, { secret: row.secret, updated_at: row.updated_at });
    await audit(tx, actor, {
      action: 'webhook.secret_rotated',
      target_type: 'webhook',
      target_id: current.id,
      details: { name: current.name },
    });
  });
  return { ...toWebhook(row), secret };
}

/** For the delivery log: the webhook (404 when there is none) and whether it sends. */
export async function webhookDestinationState(db: DB, id: string) {
  const hook = await find(db, id);
  return { id: hook.id, active: hook.status === 'active' };
}

/** For the delivery log: what the webhook would be sent for the event now. */
export async function webhookPayload(db: DB, id: string, event: StoredEvent) {
  const hook = await find(db, id);
  const names = hook.format === 'json' ? NO_NAMES : (await eventNames(db, [event]))(event);
  return renderBody(hook.format, hook.telegram_chat_id, (await safeEvents(db, [event]))(event), names);
}

/** Every event type a webhook can send, with the permission its owner needs to send it. */
export const listEventTypes = () =>
  ALL_EVENT_TYPES.map((type) => ({
    type,
    label: EVENT_TYPES[type].label,
    description: EVENT_TYPES[type].description,
    permission: EVENT_TYPES[type].permission,
    alert: EVENT_TYPES[type].alert,
  }));
