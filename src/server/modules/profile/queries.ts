import type { DB } from '../../db/database.js';

/** Whether an operator signs in with this email. */
export const emailTaken = async (db: DB, email: string) =>
  !!(await db.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst());

export const updateOwnOperator = (
  db: DB,
  id: string,
  patch: { name?: string; timezone?: string; email?: string; password_hash?: string; updated_at: string },
) => db.updateTable('operators').set(patch).where('id', '=', id).execute();

/** Ends the operator's sessions but `keepId`. */
export const deleteOtherSessions = (db: DB, operatorId: string, keepId: string) =>
  db.deleteFrom('sessions').where('operator_id', '=', operatorId).where('id', '!=', keepId).execute();
