import type { DB } from '../../db/database.js';
import type { SessionsTable } from '../../db/tables.js';

export const insertSession = (db: DB, row: SessionsTable) => db.insertInto('sessions').values(row).execute();

export const deleteSession = (db: DB, id: string) => db.deleteFrom('sessions').where('id', '=', id).execute();

/** What a login judges, by sign-in email. */
export const loginRow = (db: DB, email: string) =>
  db
    .selectFrom('operators')
    .select(['id', 'password_hash', 'status', 'totp_secret'])
    .where('email', '=', email)
    .executeTakeFirst();

export const passwordHashOf = async (db: DB, operatorId: string) =>
  (await db.selectFrom('operators').select('password_hash').where('id', '=', operatorId).executeTakeFirstOrThrow())
    .password_hash;

export const findApiKeyInfo = (db: DB, id: string) =>
  db.selectFrom('api_keys').select(['id', 'name', 'scopes', 'expires_at']).where('id', '=', id).executeTakeFirst();

// login_failures: one row per attempt to prove who you are (service.ts says why).

export const insertAttempt = (db: DB, row: { id: string; at: string; ip: string; email: string }) =>
  db.insertInto('login_failures').values(row).execute();

/** When the (skip + 1)-th newest other attempt of this account or address since `since` was made; null: fewer. */
export async function otherAttemptAt(
  db: DB,
  column: 'ip' | 'email',
  value: string,
  since: string,
  exceptId: string,
  skip: number,
): Promise<string | null> {
  const row = await db
    .selectFrom('login_failures')
    .select('at')
    .where(column, '=', value)
    .where('at', '>', since)
    .where('id', '!=', exceptId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .offset(skip)
    .limit(1)
    .executeTakeFirst();
  return row?.at ?? null;
}

/** The account's and the address's attempts made at `cutoff` or before. */
export async function deleteAttemptsBefore(db: DB, email: string, ip: string, cutoff: string) {
  await db.deleteFrom('login_failures').where('email', '=', email).where('at', '<=', cutoff).execute();
  await db.deleteFrom('login_failures').where('ip', '=', ip).where('at', '<=', cutoff).execute();
}

export const deleteAttempt = (db: DB, id: string) => db.deleteFrom('login_failures').where('id', '=', id).execute();

export const deleteAccountAttempts = (db: DB, email: string) =>
  db.deleteFrom('login_failures').where('email', '=', email).execute();
