import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { providerInScope } from '../../db/record-scope.js';
import { rowInScope, type DataScope } from '../../db/scope.js';
import { fixedOrigin, originProblem } from '../../distribution/template.js';
import type { StoredEvent } from '../../events/dispatcher.js';
import { sendHttp } from '../../events/send-http.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { checkDestinationUrl } from '../../outbound/guard.js';
import { audit, scopeOf, type Actor } from '../audit/service.js';
import {
  findProvider,
  findProviderLead,
  listPostbacks,
  postbackRows,
  type PostbackRow,
  providerCampaignIds,
  replacePostbacks,
  syncPostbackSubscriptions,
} from './queries.js';
import type { PutPostbacks } from './schemas.js';
import { MACRO, MACROS, MACRO_LIST, renderPostbackUrl, type PostbackEvent } from './macros.js';

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

// The use cases behind the routes.

/** The provider, or 404 when there is none or it is out of the reader's scope. */
const provider = async (db: DB, id: string, scope: DataScope) => {
  const found = providerInScope(scope, id) ? await findProvider(db, id) : undefined;
  return found ?? notFound('traffic provider');
};

export async function getProviderPostbacks(db: DB, providerId: string, scope: DataScope) {
  await provider(db, providerId, scope);
  return { postbacks: await listPostbacks(db, providerId) };
}

/** Postback errors beyond the schema, named by field: duplicates, foreign campaigns, bad URLs. */
function postbackErrors(items: PutPostbacks['postbacks'], campaigns: Set<string>, allowedNetworks: readonly string[]) {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  items.forEach((p, i) => {
    const key = `${p.event_type}\n${p.campaign_id ?? ''}`;
    if (seen.has(key))
      errors.push({
        field: `postbacks/${i}`,
        message: `a second postback for ${p.event_type} and ${p.campaign_id ? 'this campaign' : 'every campaign'}`,
      });
    seen.add(key);
    if (p.campaign_id !== null && !campaigns.has(p.campaign_id))
      errors.push({
        field: `postbacks/${i}/campaign_id`,
        message: "is not one of this traffic provider's campaigns",
      });
    const problem =
      templateProblem(p.url) ?? checkDestinationUrl(renderPostbackUrl(p.url, SAMPLE), allowedNetworks)?.message ?? null;
    if (problem) errors.push({ field: `postbacks/${i}/url`, message: problem });
  });
  return errors;
}

/** Replaces every postback of the provider (409 when archived) and its subscriptions. */
export async function putProviderPostbacks(
  db: DB,
  actor: Actor,
  providerId: string,
  items: PutPostbacks['postbacks'],
  allowedNetworks: readonly string[],
  action: 'traffic_provider.postbacks_updated' | 'portal.postbacks_updated' = 'traffic_provider.postbacks_updated',
) {
  const current = await provider(db, providerId, scopeOf(actor));
  if (current.archived_at) conflict('This traffic provider is archived and cannot be changed.');
  const campaigns = new Set(await providerCampaignIds(db, current.id));
  const errors = postbackErrors(items, campaigns, allowedNetworks);
  if (errors.length) invalid(errors);
  const before = await listPostbacks(db, current.id);
  await db.transaction().execute(async (tx) => {
    await replacePostbacks(tx, current.id, items, nowIso());
    await syncPostbackSubscriptions(tx, current.id);
    await audit(tx, actor, {
      action,
      target_type: 'traffic_provider',
      target_id: current.id,
      details: { before, after: items },
    });
  });
  return { postbacks: await listPostbacks(db, current.id) };
}

/**
 * Calls the provider's postback for the event once, now, filled from one of its leads or the
 * sample, through `agent` (made on first use); nothing is stored.
 */
export async function testProviderPostback(
  db: DB,
  agent: () => Agent,
  providerId: string,
  b: { event_type: PostbackEvent; campaign_id?: string | null; lead_id?: string },
  scope: DataScope,
) {
  const current = await provider(db, providerId, scope);
  let event: Pick<StoredEvent, 'type' | 'lead_id' | 'data'> = { ...SAMPLE, type: b.event_type };
  let campaignId = b.campaign_id ?? null;
  if (b.lead_id) {
    const found = await findProviderLead(db, current.id, b.lead_id);
    const lead = found && rowInScope(scope, found) ? found : notFound('lead of this traffic provider');
    const { id, partner_id: _partner, traffic_provider_id: _provider, ...data } = lead;
    event = { type: b.event_type, lead_id: id, data };
    campaignId = lead.campaign_id;
  }
  const rows = await postbackRows(db, [current.id]);
  const template =
    templateFor(rows, current.id, b.event_type, campaignId) ??
    conflict(`This traffic provider has no postback for ${b.event_type}${campaignId ? ' and that campaign' : ''}.`);
  const target = postbackUrl(template, event);
  const url = 'refused' in target ? conflict(`This postback is ${target.refused}.`) : target.url;
  const r = await sendHttp(
    agent(),
    { method: 'GET', url, headers: { 'user-agent': 'Leadgate-Postback' }, body: null },
    "the provider's tracker",
  );
  return {
    url,
    ok: r.ok,
    http_status: r.status,
    error: r.error,
    response_excerpt: r.excerpt,
    duration_ms: r.duration_ms,
  };
}

/** For the delivery log: the provider (404 when there is none); its postbacks always send. */
export async function postbackDestinationState(db: DB, providerId: string, scope: DataScope) {
  const p = await provider(db, providerId, scope);
  return { id: p.id, active: true };
}

/** For the delivery log: the URL the event would call now. */
export async function postbackPayload(db: DB, providerId: string, event: StoredEvent) {
  const rows = await postbackRows(db, [providerId]);
  const template = templateFor(rows, providerId, event.type, event.campaign_id);
  if (!template) return '(no postback for this event any more)';
  const target = postbackUrl(template, event);
  return 'refused' in target ? `(${target.refused})` : target.url;
}
