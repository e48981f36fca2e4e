import type { DB } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import type { PutPostbacks } from './schemas.js';
import type { PostbackEvent } from './macros.js';

export const findProvider = (db: DB, id: string) =>
  db.selectFrom('traffic_providers').select(['id', 'name', 'archived_at']).where('id', '=', id).executeTakeFirst();

/** The provider's postbacks as shown: by event, then oldest first. */
export const listPostbacks = async (db: DB, providerId: string) =>
  (await db
    .selectFrom('provider_postbacks')
    .select(['event_type', 'campaign_id', 'url'])
    .where('traffic_provider_id', '=', providerId)
    .orderBy('event_type')
    .orderBy('created_at')
    .execute()) as { event_type: PostbackEvent; campaign_id: string | null; url: string }[];

export const providerCampaignIds = async (db: DB, providerId: string) =>
  (await db.selectFrom('campaigns').select('id').where('traffic_provider_id', '=', providerId).execute()).map(
    (c) => c.id,
  );

/** Replaces every postback of the provider with `items`. */
export async function replacePostbacks(db: DB, providerId: string, items: PutPostbacks['postbacks'], now: string) {
  await db.deleteFrom('provider_postbacks').where('traffic_provider_id', '=', providerId).execute();
  if (items.length) {
    await db
      .insertInto('provider_postbacks')
      .values(
        items.map((p) => ({
          id: newId(),
          traffic_provider_id: providerId,
          campaign_id: p.campaign_id,
          event_type: p.event_type,
          url: p.url,
          created_at: now,
        })),
      )
      .execute();
  }
}

/** One of the provider's leads, with what its postback macros are filled from. */
export const findProviderLead = (db: DB, providerId: string, leadId: string) =>
  db
    .selectFrom('leads')
    .select([
      'id',
      'traffic_provider_id',
      'partner_id',
      'status',
      'sale_status',
      'cost_cents',
      'country',
      'campaign_id',
      'ftd_at',
      'sub_id1',
      'sub_id2',
      'sub_id3',
      'sub_id4',
      'sub_id5',
    ])
    .where('id', '=', leadId)
    .where('traffic_provider_id', '=', providerId)
    .executeTakeFirst();

/**
 * The provider's rows in event_subscriptions: per event type, one for all campaigns when it has
 * a provider-wide postback for it, else one per campaign with its own. Never two that match one event.
 */
export async function syncPostbackSubscriptions(db: DB, providerId: string) {
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
export const postbackRows = (db: DB, providerIds: string[]): Promise<PostbackRow[]> =>
  db
    .selectFrom('provider_postbacks')
    .select(['traffic_provider_id', 'campaign_id', 'event_type', 'url'])
    .where('traffic_provider_id', 'in', providerIds)
    .execute();

/**
 * The status events (not sale status changes) each provider's tracker already had for these
 * leads, as `${provider}\n${lead}\n${type}`: a provider gets one postback per lead and event.
 */
export async function postbacksAlreadySent(db: DB, providerIds: string[], leadIds: string[]): Promise<Set<string>> {
  if (!providerIds.length || !leadIds.length) return new Set();
  const rows = await db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select(['d.destination_id', 'd.lead_id', 'e.type'])
    .where('d.destination_kind', '=', 'postback')
    .where('d.destination_id', 'in', providerIds)
    .where('d.lead_id', 'in', leadIds)
    .where('d.state', '=', 'delivered')
    .where('e.type', '!=', 'lead.sale_status_changed')
    .execute();
  return new Set(rows.map((r) => `${r.destination_id}\n${r.lead_id}\n${r.type}`));
}
