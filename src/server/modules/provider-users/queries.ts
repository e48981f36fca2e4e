import type { Insertable, Updateable } from 'kysely';
import type { DB } from '../../db/database.js';
import type { ProviderApiKeysTable, ProviderSessionsTable, ProviderUsersTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';

// Provider users (issue 27), their sessions and their keys: the SQL both sides share, the
// operators' (modules/provider-users) and the portal's (modules/portal).

const userColumns = [
  'id',
  'traffic_provider_id',
  'email',
  'name',
  'status',
  'timezone',
  'invitation_expires_at',
  'created_at',
  'updated_at',
  'last_login_at',
] as const;

export const insertProviderUser = (db: DB, row: Insertable<ProviderUsersTable>) =>
  db.insertInto('provider_users').values(row).execute();

export const patchProviderUser = (db: DB, id: string, patch: Updateable<ProviderUsersTable>) =>
  db.updateTable('provider_users').set(patch).where('id', '=', id).execute();

/** One user of one provider (another provider's user is not found). */
export const findProviderUser = (db: DB, providerId: string, id: string) =>
  db
    .selectFrom('provider_users')
    .select([...userColumns, 'totp_secret'])
    .where('id', '=', id)
    .where('traffic_provider_id', '=', providerId)
    .executeTakeFirst();

/** Whether the user has set a password (accepted its invitation). */
export const hasPassword = async (db: DB, id: string) =>
  (await db.selectFrom('provider_users').select('password_hash').where('id', '=', id).executeTakeFirstOrThrow())
    .password_hash !== null;

export async function providerUserPage(db: DB, providerId: string, f: { limit: number; cursor?: string }) {
  const after = decodeCursor(f.cursor, ['id']);
  let q = db
    .selectFrom('provider_users')
    .select([...userColumns, 'totp_secret'])
    .where('traffic_provider_id', '=', providerId)
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) q = q.where('id', '>', after.id);
  return pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
}

/** What a sign-in judges for a provider user, by email, with whether its portal is open. */
export const providerLoginRow = (db: DB, email: string) =>
  db
    .selectFrom('provider_users')
    .innerJoin('traffic_providers', 'traffic_providers.id', 'provider_users.traffic_provider_id')
    .select([
      'provider_users.id',
      'provider_users.password_hash',
      'provider_users.status',
      'provider_users.totp_secret',
      'provider_users.totp_last_step',
      'provider_users.traffic_provider_id',
      'traffic_providers.portal_enabled',
      'traffic_providers.archived_at',
    ])
    .where('provider_users.email', '=', email)
    .executeTakeFirst();

export const userByInvitation = (db: DB, invitationHash: string) =>
  db
    .selectFrom('provider_users')
    .select(['id', 'email', 'status', 'traffic_provider_id', 'invitation_expires_at'])
    .where('invitation_hash', '=', invitationHash)
    .executeTakeFirst();

export const insertPortalSession = (db: DB, row: Insertable<ProviderSessionsTable>) =>
  db.insertInto('provider_sessions').values(row).execute();

export const deletePortalSession = (db: DB, id: string) =>
  db.deleteFrom('provider_sessions').where('id', '=', id).execute();

export const deleteUserSessions = (db: DB, userId: string) =>
  db.deleteFrom('provider_sessions').where('provider_user_id', '=', userId).execute();

/** Conditional on the step, so two sign-ins racing with one code cannot both win. */
export const spendTotpStep = async (db: DB, userId: string, step: number) =>
  (
    await db
      .updateTable('provider_users')
      .set({ totp_last_step: step })
      .where('id', '=', userId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst()
  ).numUpdatedRows > 0n;

const keyColumns = [
  'id',
  'provider_user_id',
  'name',
  'scopes',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
] as const;

export const insertPortalKey = (db: DB, row: Insertable<ProviderApiKeysTable>) =>
  db.insertInto('provider_api_keys').values(row).execute();

/** A key of one user (another user's key is not found). */
export const findPortalKey = (db: DB, userId: string, id: string) =>
  db
    .selectFrom('provider_api_keys')
    .select(keyColumns)
    .where('id', '=', id)
    .where('provider_user_id', '=', userId)
    .executeTakeFirst();

export async function portalKeyPage(db: DB, userId: string, f: { limit: number; cursor?: string }) {
  const after = decodeCursor(f.cursor, ['id']);
  let q = db
    .selectFrom('provider_api_keys')
    .select(keyColumns)
    .where('provider_user_id', '=', userId)
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) q = q.where('id', '>', after.id);
  return pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
}

export const revokePortalKey = (db: DB, id: string, at: string) =>
  db
    .updateTable('provider_api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .execute();

export const revokeUserKeys = (db: DB, userId: string, at: string) =>
  db
    .updateTable('provider_api_keys')
    .set({ revoked_at: at })
    .where('provider_user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
