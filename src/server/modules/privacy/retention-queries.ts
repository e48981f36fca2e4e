import { sql, type Kysely } from 'kysely';
import type { Database, RetentionRunsTable } from '../../db/tables.js';
import { deleteSetting, writeSetting } from '../../db/settings.js';
import { KEEP_ROLLUPS_KEY } from '../../db/triggers/rollups.js';
import { ERASED_LEAD_COLUMNS } from './queries.js';

// The retention's SQL (retention-service.ts): batches of old leads in (created_at, id) order on
// leads_created, their deletion with the rows that reference them, and the runs' records.

type DB = Kysely<Database>;

/** Where the contacts purge has got to: every lead up to it (in created_at, id order) is done. */
export interface Cursor {
  created_at: string;
  id: string;
}

/** The next leads received before `before`, after `cursor`, whose contacts are still there. */
export const leadsToPurge = (db: DB, before: string, cursor: Cursor | null, limit: number) => {
  let q = db
    .selectFrom('leads')
    .select([...ERASED_LEAD_COLUMNS, 'created_at', 'erased_at'])
    .where('created_at', '<', before);
  // A row value: both engines start the index range at the cursor (an OR of the two columns made
  // SQLite walk the index from its start every batch).
  if (cursor) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '>', eb.tuple(cursor.created_at, cursor.id)));
  // Erased leads are read and passed over (the cursor moves past them): filtering them here would
  // let one statement walk millions of them.
  return q.orderBy('created_at').orderBy('id').limit(limit).execute();
};

/** The oldest leads received before `before`: their ids. */
export const leadsToDelete = (db: DB, before: string, limit: number) =>
  db
    .selectFrom('leads')
    .select('id')
    .where('created_at', '<', before)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute()
    .then((rows) => rows.map((r) => r.id));

/**
 * Deletes the leads and what references them (their attempts, status history, velocity and
 * idempotency rows go with them by cascade; tracked links, their opens, re-injection items and
 * outbox events here), keeping them counted in the rollups (KEEP_ROLLUPS_KEY, held only inside
 * this transaction). The providers' hash-chained logs, the contact-view log and erasure receipts
 * keep their lead ids: they are records of what happened. Run inside a transaction.
 */
export async function deleteLeads(tx: DB, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  await writeSetting(tx, KEEP_ROLLUPS_KEY, true);
  await tx.deleteFrom('autologin_opens').where('lead_id', 'in', ids).execute();
  await tx.deleteFrom('autologin_links').where('lead_id', 'in', ids).execute();
  await tx.deleteFrom('injection_items').where('lead_id', 'in', ids).execute();
  await tx.deleteFrom('events').where('lead_id', 'in', ids).execute();
  const done = await tx.deleteFrom('leads').where('id', 'in', ids).executeTakeFirst();
  await deleteSetting(tx, KEEP_ROLLUPS_KEY);
  return Number(done.numDeletedRows);
}

export const insertRun = (db: DB, row: Omit<RetentionRunsTable, 'contacts_purged' | 'leads_deleted'>) =>
  db.insertInto('retention_runs').values(row).execute();

/** Adds a batch's counts to its run. */
export const addToRun = (db: DB, id: string, counts: { contacts: number; leads: number }, at: string) =>
  db
    .updateTable('retention_runs')
    .set({
      contacts_purged: sql`contacts_purged + ${counts.contacts}`,
      leads_deleted: sql`leads_deleted + ${counts.leads}`,
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();

export const finishRun = (db: DB, id: string, state: 'done' | 'failed', at: string, error: string | null) =>
  db
    .updateTable('retention_runs')
    .set({ state, finished_at: at, updated_at: at, error })
    .where('id', '=', id)
    .execute();

/** A run some process left running: it stopped (crashed) before its end. */
export const failAbandonedRuns = (db: DB, at: string) =>
  db
    .updateTable('retention_runs')
    .set({ state: 'failed', finished_at: at, error: 'the process running it stopped; the next run goes on from there' })
    .where('state', '=', 'running')
    .execute();

export const latestRuns = (db: DB, limit: number) =>
  db
    .selectFrom('retention_runs')
    .selectAll()
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
