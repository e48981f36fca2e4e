import type { DB } from '../../db/database.js';

/** Whether anyone signs in with this email: an operator, or a traffic provider's portal user (one sign-in page for both). */
export const emailTaken = async (db: DB, email: string) =>
  !!(await db.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst()) ||
  !!(await db.selectFrom('provider_users').select('id').where('email', '=', email).executeTakeFirst());

export const updateOwnOperator = (
  db: DB,
  id: string,
  patch: { name?: string; timezone?: string; email?: string; password_hash?: string; updated_at: string },
) => db.updateTable('operators').set(patch).where('id', '=', id).execute();

/** Ends the operator's sessions but `keepId`; how many ended. */
export async function deleteOtherSessions(db: DB, operatorId: string, keepId: string) {
  const res = await db
    .deleteFrom('sessions')
    .where('operator_id', '=', operatorId)
    .where('id', '!=', keepId)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}

/** Ends one of the operator's sessions; false when it has none by that id. */
export async function deleteOwnSession(db: DB, operatorId: string, id: string) {
  const res = await db
    .deleteFrom('sessions')
    .where('id', '=', id)
    .where('operator_id', '=', operatorId)
    .executeTakeFirst();
  return res.numDeletedRows !== 0n;
}

/** The operator's sessions seen since `since`, newest sign-in first, after the cursor; limit + 1 rows. */
export async function liveSessions(
  db: DB,
  operatorId: string,
  since: string,
  after: { created_at: string; id: string } | null,
  limit: number,
) {
  let q = db
    .selectFrom('sessions')
    .select(['id', 'created_at', 'last_seen_at', 'ip', 'user_agent'])
    .where('operator_id', '=', operatorId)
    .where('last_seen_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1);
  // Session ids are random: the sign-in time orders them, the id breaks ties.
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('created_at', '<', after.created_at),
        eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)]),
      ]),
    );
  return q.execute();
}
