import type { DB } from '../db/database.js';

/**
 * A delivery made pending again, to be tried now and for another 24 hours; left alone while a
 * try holds its lease.
 */
export async function requeueDelivery(db: DB, deliveryId: string, now: number) {
  await db
    .updateTable('event_deliveries')
    .set({
      state: 'pending',
      next_attempt_at: new Date(now).toISOString(),
      expires_at: new Date(now + 86400_000).toISOString(),
      last_error: null,
    })
    .where('id', '=', Number(deliveryId))
    .where((eb) =>
      eb.or([
        eb('state', '!=', 'pending'),
        eb('lease_until', 'is', null),
        eb('lease_until', '<', new Date(now).toISOString()),
      ]),
    )
    .execute();
}
