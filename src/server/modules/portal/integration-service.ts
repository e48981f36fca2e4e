// The portal's integration (issue 27): the provider's campaigns and their intake documentation,
// its intake token, its postbacks with their delivery log and a test send. Each use case acts
// on the principal's own provider only; the operators' use cases are reused with that id.
import type { Static } from 'typebox';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { parsePrice, shownPrice } from '../../distribution/prices.js';
import type { DeliveryListQuery } from '../../events/schemas.js';
import { notFound } from '../../http/errors.js';
import { audit, providerOf, type Actor } from '../audit/service.js';
import { getDestinationDelivery, listDestinationDeliveries, type DeliveryLogReads } from '../delivery-log/service.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import type { PostbackEvent } from '../provider-postbacks/macros.js';
import type { PutPostbacks } from '../provider-postbacks/schemas.js';
import {
  getProviderPostbacks,
  postbackDestinationState,
  postbackPayload,
  putProviderPostbacks,
  testProviderPostback,
} from '../provider-postbacks/service.js';
import { readPortalSettings } from '../traffic-providers/portal-settings.js';
import { rotateTrafficProviderToken } from '../traffic-providers/service.js';
import { INTAKE_PATH, intakeDocs } from './intake-docs.js';
import { providerCampaign, providerCampaignPage } from './integration-queries.js';

type CampaignRow = { id: string; name: string; status: 'active' | 'paused'; countries: string; payout: string };

const toPortalCampaign = (r: CampaignRow, showPayout: boolean) => ({
  id: r.id,
  name: r.name,
  status: r.status,
  countries: JSON.parse(r.countries) as string[],
  payout: showPayout ? shownPrice(parsePrice(r.payout)!) : null,
});

/** The provider's campaigns, with their countries and payout (null while the operator hides payouts). */
export async function listPortalCampaigns(db: DB, actor: Actor, f: { limit: number; cursor?: string }) {
  const p = providerOf(actor);
  const settings = (await readPortalSettings(db, p.trafficProviderId))!;
  const page = await providerCampaignPage(db, p.trafficProviderId, f);
  return { ...page, data: page.data.map((r) => toPortalCampaign(r, settings.show_payout)) };
}

/** The intake documentation for one of the provider's campaigns (another provider's: 404). */
export async function portalCampaignDocs(db: DB, actor: Actor, id: string) {
  const p = providerOf(actor);
  const row = (await providerCampaign(db, p.trafficProviderId, id)) ?? notFound('campaign');
  const url = publicLink(await readPublicBaseUrl(db), INTAKE_PATH);
  return intakeDocs({ ...row, countries: JSON.parse(row.countries) as string[] }, url);
}

/** A new intake token for the provider, shown this once; the old one stops working. Audited as the provider user. */
export async function rotatePortalIntakeToken(db: DB, actor: Actor) {
  const p = providerOf(actor);
  const rotated = await rotateTrafficProviderToken(db, actor, p.trafficProviderId, 'portal.token_rotated');
  return {
    token: rotated.token,
    token_prefix: rotated.token_prefix,
    intake_url: rotated.intake_url,
    rotated_at: rotated.updated_at,
  };
}

export const getPortalPostbacks = (db: DB, actor: Actor) =>
  getProviderPostbacks(db, providerOf(actor).trafficProviderId, providerOf(actor).scope);

export const putPortalPostbacks = (
  db: DB,
  actor: Actor,
  items: PutPostbacks['postbacks'],
  allowedNetworks: readonly string[],
) =>
  putProviderPostbacks(
    db,
    actor,
    providerOf(actor).trafficProviderId,
    items,
    allowedNetworks,
    'portal.postbacks_updated',
  );

/** The operators' test send, for the provider's own postback (and lead); audited as the provider user. */
export async function testPortalPostback(
  db: DB,
  agent: () => Agent,
  actor: Actor,
  b: { event_type: PostbackEvent; campaign_id?: string | null; lead_id?: string },
) {
  const p = providerOf(actor);
  const result = await testProviderPostback(db, agent, p.trafficProviderId, b, p.scope);
  await audit(db, actor, {
    action: 'portal.postback_tested',
    target_type: 'traffic_provider',
    target_id: p.trafficProviderId,
    details: { event_type: b.event_type, lead_id: b.lead_id ?? null, ok: result.ok, http_status: result.http_status },
  });
  return result;
}

/** The delivery log's view of the provider's postbacks (modules/delivery-log). */
const postbackLog = (db: DB): DeliveryLogReads => ({
  kind: 'postback',
  what: 'Postbacks',
  find: (id: string, scope) => postbackDestinationState(db, id, scope),
  payload: (id: string, event: Parameters<typeof postbackPayload>[2]) => postbackPayload(db, id, event),
});

export const listPortalPostbackDeliveries = (db: DB, actor: Actor, q: Static<typeof DeliveryListQuery>) =>
  listDestinationDeliveries(db, actor, postbackLog(db), providerOf(actor).trafficProviderId, q);

export const getPortalPostbackDelivery = (db: DB, actor: Actor, deliveryId: string) =>
  getDestinationDelivery(db, actor, postbackLog(db), providerOf(actor).trafficProviderId, deliveryId);
