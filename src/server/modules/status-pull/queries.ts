import type { DB } from '../../db/database.js';

export const findPartner = (db: DB, id: string) =>
  db.selectFrom('partners').select(['id', 'name', 'archived_at']).where('id', '=', id).executeTakeFirst();

/** The partner's stored status pull, with its health. */
export const findStatusPull = (db: DB, partnerId: string) =>
  db.selectFrom('partner_status_pulls').selectAll().where('partner_id', '=', partnerId).executeTakeFirst();

export type StatusPullRow = NonNullable<Awaited<ReturnType<typeof findStatusPull>>>;

/** Creates or replaces the partner's pull, due at once; a new one starts with clean health. */
export async function saveStatusPull(db: DB, partnerId: string, config: string, now: string) {
  await db
    .insertInto('partner_status_pulls')
    .values({
      partner_id: partnerId,
      config,
      next_run_at: now,
      updated_at: now,
      last_updated: 0,
      consecutive_failures: 0,
    })
    .onConflict((oc) => oc.column('partner_id').doUpdateSet({ config, next_run_at: now, updated_at: now }))
    .execute();
}

/** Records that a dry run of the settings with this fingerprint was made. */
export async function markPreviewed(db: DB, partnerId: string, fingerprint: string) {
  await db
    .updateTable('partner_status_pulls')
    .set({ previewed: fingerprint })
    .where('partner_id', '=', partnerId)
    .execute();
}

/** Whether there was one to delete. */
export async function deleteStatusPullRow(db: DB, partnerId: string): Promise<boolean> {
  const res = await db.deleteFrom('partner_status_pulls').where('partner_id', '=', partnerId).executeTakeFirst();
  return Number(res.numDeletedRows) !== 0;
}
