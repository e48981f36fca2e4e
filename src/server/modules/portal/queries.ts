// The SQL of the portal's own account reads and writes (its user, two-factor sign-in). Every
// statement names the user or provider from the principal, never from the request.
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { seal } from '../../secrets/box.js';

export const providerName = (db: DB, trafficProviderId: string) =>
  db
    .selectFrom('traffic_providers')
    .select(['id', 'name'])
    .where('id', '=', trafficProviderId)
    .executeTakeFirstOrThrow();

/** A provider user with its provider's name (what sign-in answers). */
export const userWithProvider = (db: DB, userId: string) =>
  db
    .selectFrom('provider_users')
    .innerJoin('traffic_providers', 'traffic_providers.id', 'provider_users.traffic_provider_id')
    .select([
      'provider_users.id',
      'provider_users.email',
      'provider_users.name',
      'provider_users.timezone',
      'provider_users.totp_secret',
      'traffic_providers.id as provider_id',
      'traffic_providers.name as provider_name',
    ])
    .where('provider_users.id', '=', userId)
    .executeTakeFirstOrThrow();

export const totpRow = (db: DB, id: string) =>
  db
    .selectFrom('provider_users')
    .select(['email', 'password_hash', 'totp_secret', 'totp_pending_secret'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

/** A new pending secret, unless two-factor is on: whether it was set. */
export async function setPendingSecret(db: DB, id: string, secret: string): Promise<boolean> {
  const res = await db
    .updateTable('provider_users')
    .set({ totp_pending_secret: seal(secret, 'totp-seed') })
    .where('id', '=', id)
    .where('totp_secret', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

/** The pending secret made the secret, if it is still `pending`: whether it was. */
export async function enableTotp(db: DB, id: string, pending: string, step: number): Promise<boolean> {
  const res = await db
    .updateTable('provider_users')
    .set({ totp_secret: pending, totp_pending_secret: null, totp_last_step: step, updated_at: nowIso() })
    .where('id', '=', id)
    .where('totp_pending_secret', '=', pending)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n;
}

export const disableTotp = (db: DB, id: string) =>
  db
    .updateTable('provider_users')
    .set({ totp_secret: null, totp_pending_secret: null, totp_last_step: null, updated_at: nowIso() })
    .where('id', '=', id)
    .execute();
