import type { Kysely } from 'kysely';
import { isPostgres } from './database.js';
import { nowIso } from './ids.js';
import type { Database } from './tables.js';

/** Records that leads may still point at after an operator deletes them: archived instead. */
export type ArchivableTable = 'campaigns' | 'flows' | 'traffic_providers' | 'partners';

/** What happened: the caller audits 'archived' and 'deleted'; 'unchanged' was archived already. */
export type ArchiveOutcome = 'archived' | 'deleted' | 'unchanged';

export interface ArchiveSteps<R> {
  /** Reads the row, once it is locked; undefined: no such row (nothing changes). */
  find: () => Promise<R | undefined>;
  /** Throws to refuse (a 409 naming live records that still use it) before anything changes. */
  refuse?: (row: R) => Promise<void>;
  /** Whether anything still refers to the row: then it is archived, not deleted. */
  referenced: (row: R) => Promise<boolean>;
  /** Set updated_at as well as archived_at when archiving. */
  touch?: boolean;
  /** Runs just before the row is deleted: rows that go with it (a flow's targets). */
  beforeDelete?: (row: R) => Promise<void>;
}

/**
 * "Delete, or archive while leads still need it", inside the caller's transaction. The row is
 * locked first on PostgreSQL (SQLite serializes writers): whoever points a record at it holds
 * a share lock, so the checks after see every reference committed before. Returns undefined
 * when there is no such row, else the row as read and what was done.
 */
export async function archiveOrDelete<R extends { id: string; archived_at: string | null }>(
  tx: Kysely<Database>,
  table: ArchivableTable,
  id: string,
  steps: ArchiveSteps<R>,
): Promise<{ row: R; outcome: ArchiveOutcome } | undefined> {
  if (isPostgres(tx)) await tx.selectFrom(table).select('id').where('id', '=', id).forUpdate().execute();
  const row = await steps.find();
  if (!row) return undefined;
  await steps.refuse?.(row);
  if (await steps.referenced(row)) {
    if (row.archived_at) return { row, outcome: 'unchanged' };
    const now = nowIso();
    await tx
      .updateTable(table)
      .set(steps.touch ? { archived_at: now, updated_at: now } : { archived_at: now })
      .where('id', '=', row.id)
      .execute();
    return { row, outcome: 'archived' };
  }
  await steps.beforeDelete?.(row);
  await tx.deleteFrom(table).where('id', '=', row.id).execute();
  return { row, outcome: 'deleted' };
}
