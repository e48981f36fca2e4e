import type { Kysely } from 'kysely';
import type { Database, WebhooksTable } from '../../db/tables.js';
import type { EventType } from '../../events/types.js';

type Db = Kysely<Database>;

/** Every webhook, oldest first. */
export const listWebhookRows = (db: Db) =>
  db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute();

export const findWebhookRow = (db: Db, id: string) =>
  db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();

export const insertWebhookRow = (db: Db, row: WebhooksTable) => db.insertInto('webhooks').values(row).execute();

export const updateWebhookRow = (db: Db, id: string, patch: Partial<WebhooksTable>) =>
  db.updateTable('webhooks').set(patch).where('id', '=', id).execute();

/** The webhook, its subscriptions and its delivery log. */
export async function deleteWebhookRows(db: Db, id: string) {
  await db
    .deleteFrom('event_subscriptions')
    .where('destination_kind', '=', 'webhook')
    .where('destination_id', '=', id)
    .execute();
  await db
    .deleteFrom('event_deliveries')
    .where('destination_kind', '=', 'webhook')
    .where('destination_id', '=', id)
    .execute();
  await db.deleteFrom('webhooks').where('id', '=', id).execute();
}

/** The webhook's rows in event_subscriptions: one per type in `types` (none: unsubscribed). */
export async function replaceSubscriptions(db: Db, id: string, types: readonly EventType[]) {
  await db
    .deleteFrom('event_subscriptions')
    .where('destination_kind', '=', 'webhook')
    .where('destination_id', '=', id)
    .execute();
  if (!types.length) return;
  await db
    .insertInto('event_subscriptions')
    .values(
      types.map((t) => ({
        event_type: t,
        destination_kind: 'webhook' as const,
        destination_id: id,
        traffic_provider_id: null,
        campaign_id: null,
      })),
    )
    .execute();
}

/** Ends the webhook's pending deliveries (it was disabled or deleted). */
export async function cancelPending(db: Db, id: string, reason: string) {
  await db
    .updateTable('event_deliveries')
    .set({ state: 'cancelled', last_error: reason, lease_until: null, lease_token: null })
    .where('destination_kind', '=', 'webhook')
    .where('destination_id', '=', id)
    .where('state', '=', 'pending')
    .execute();
}
