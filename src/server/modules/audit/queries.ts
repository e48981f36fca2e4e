import type { DB } from '../../db/database.js';
import type { Insertable } from 'kysely';
import type { AuditLogTable } from '../../db/tables.js';

export const insertAuditEntry = (db: DB, row: Insertable<AuditLogTable>) =>
  db.insertInto('audit_log').values(row).execute();

/** Entries newest first, before `beforeId` (the cursor), optionally of one action or actor; limit + 1 rows. */
export async function auditRows(db: DB, q: { beforeId?: string; action?: string; actorId?: string; limit: number }) {
  let query = db
    .selectFrom('audit_log')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(q.limit + 1);
  if (q.beforeId !== undefined) query = query.where('id', '<', q.beforeId);
  if (q.action) query = query.where('action', '=', q.action);
  if (q.actorId) query = query.where('actor_id', '=', q.actorId);
  return query.execute();
}
