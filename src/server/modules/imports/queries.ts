import { sql, type Insertable, type Kysely, type Selectable } from 'kysely';
import type {
  Database,
  ImportChunksTable,
  ImportErrorsTable,
  ImportState,
  ImportsTable,
  LeadsTable,
} from '../../db/tables.js';

type DB = Kysely<Database>;

export type ImportRow = Selectable<ImportsTable>;

/** Rows per multi-row insert (well under both engines' bound-parameter limits). */
const BATCH = 200;

async function inBatches<T>(rows: T[], size: number, fn: (batch: T[]) => Promise<unknown>) {
  for (let i = 0; i < rows.length; i += size) await fn(rows.slice(i, i + size));
}

export const insertImport = (db: DB, row: Insertable<ImportsTable>) => db.insertInto('imports').values(row).execute();

export const insertChunk = (db: DB, chunk: ImportChunksTable) => db.insertInto('import_chunks').values(chunk).execute();

export const updateImport = (db: DB, id: string, set: Partial<ImportRow>) =>
  db.updateTable('imports').set(set).where('id', '=', id).execute();

export const importById = (db: DB, id: string) =>
  db.selectFrom('imports').selectAll().where('id', '=', id).executeTakeFirst();

/** An import and everything kept for it (an upload refused half-way: nothing kept). */
export async function deleteImport(db: DB, id: string) {
  await deleteWork(db, id);
  await db.deleteFrom('import_errors').where('import_id', '=', id).execute();
  await db.deleteFrom('imports').where('id', '=', id).execute();
}

/** Rows one delete takes: an import of a million rows keeps two million keys, and one statement
 * deleting them all would hold SQLite's one writer (and the event loop) for seconds. */
const DELETE_BATCH = 5_000;

/** Deletes an import's rows of `table` a batch per statement, requests in between; not in a transaction. */
async function deleteInBatches(
  db: DB,
  table: 'import_chunks' | 'import_keys' | 'import_errors',
  id: string,
  whileIn: readonly ImportState[] | null = null,
) {
  const key = table === 'import_chunks' ? 'seq' : table === 'import_keys' ? 'key' : 'row';
  for (;;) {
    let q = db
      .deleteFrom(table)
      .where('import_id', '=', id)
      .where(key, 'in', (eb) => eb.selectFrom(table).select(key).where('import_id', '=', id).limit(DELETE_BATCH));
    // Only while the import is still in one of these states (a start's reset never races its worker).
    if (whileIn)
      q = q.where((eb) =>
        eb.exists(eb.selectFrom('imports').select('id').where('id', '=', id).where('state', 'in', whileIn)),
      );
    const res = await q.executeTakeFirst();
    if (Number(res.numDeletedRows) < DELETE_BATCH) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** What only the work needs: the file's chunks and the seen duplicate keys (in batches, outside a transaction). */
export async function deleteWork(db: DB, id: string) {
  await deleteInBatches(db, 'import_chunks', id);
  await deleteInBatches(db, 'import_keys', id);
}

/**
 * A new dry run or import starts from the first chunk: the last one's bad rows and keys go, in
 * batches and only while the import is in `whileIn` (before its start is committed).
 */
export async function resetWork(db: DB, id: string, whileIn: readonly ImportState[] | null = null) {
  await deleteInBatches(db, 'import_errors', id, whileIn);
  await deleteInBatches(db, 'import_keys', id, whileIn);
}

/** Imports finished (done, cancelled, failed) whose work is still stored (a process stopped while deleting it). */
export const finishedWithWork = (db: DB) =>
  db
    .selectFrom('imports')
    .select('id')
    .where('state', 'in', ['done', 'cancelled', 'failed'])
    .where((eb) =>
      eb.or([
        eb.exists(eb.selectFrom('import_chunks').select('seq').whereRef('import_chunks.import_id', '=', 'imports.id')),
        eb.exists(eb.selectFrom('import_keys').select('key').whereRef('import_keys.import_id', '=', 'imports.id')),
      ]),
    )
    .execute();

/** Newest first, after the cursor; `createdBy` narrows to one operator's imports (a scoped role). */
export function listImports(db: DB, after: { c: string; id: string } | null, limit: number, createdBy: string | null) {
  let q = db.selectFrom('imports').selectAll().where('state', '<>', 'uploading');
  if (createdBy !== null) q = q.where('created_by', '=', createdBy);
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.c, after.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

export const chunkAt = (db: DB, id: string, seq: number) =>
  db.selectFrom('import_chunks').selectAll().where('import_id', '=', id).where('seq', '=', seq).executeTakeFirst();

/** Moves the import from one of `from` to `to`; false when it is in none of them. */
export async function setState(db: DB, id: string, from: ImportState[], to: ImportState, set: Partial<ImportRow>) {
  const res = await db
    .updateTable('imports')
    .set({ ...set, state: to })
    .where('id', '=', id)
    .where('state', 'in', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export const savedMapping = (db: DB, hash: string) =>
  db.selectFrom('import_mappings').select('mapping').where('header_hash', '=', hash).executeTakeFirst();

export const saveMapping = (db: DB, hash: string, mapping: string, now: string) =>
  db
    .insertInto('import_mappings')
    .values({ header_hash: hash, mapping, updated_at: now })
    .onConflict((oc) => oc.column('header_hash').doUpdateSet({ mapping, updated_at: now }))
    .execute();

/** A page of bad rows in row order, after the cursor's (row, field). */
export function errorPage(db: DB, id: string, after: { r: string; f: string } | null, limit: number) {
  let q = db.selectFrom('import_errors').selectAll().where('import_id', '=', id);
  if (after) q = q.where((eb) => eb(eb.refTuple('row', 'field'), '>', eb.tuple(Number(after.r), after.f)));
  return q.orderBy('row').orderBy('field').limit(limit).execute();
}

/** The provider's duplicate policy and archived state, and the campaign's. */
export const providerById = (db: DB, id: string) =>
  db
    .selectFrom('traffic_providers')
    .select(['id', 'duplicate_policy', 'archived_at'])
    .where('id', '=', id)
    .executeTakeFirst();

export const campaignById = (db: DB, id: string) =>
  db
    .selectFrom('campaigns')
    .select(['id', 'traffic_provider_id', 'flow_id', 'countries', 'archived_at'])
    .where('id', '=', id)
    .executeTakeFirst();

// The worker's statements (worker.ts).

/** Imports with work to do: a dry run or an import under way. */
export const workingImports = (db: DB) =>
  db
    .selectFrom('imports')
    .select('id')
    .where('state', 'in', ['validating', 'importing'])
    .orderBy('created_at')
    .execute();

/** The import's lease for `holder` until `until`: taken when free, run out or already held. */
export async function takeLease(db: DB, id: string, holder: string, now: string, until: string) {
  const res = await db
    .updateTable('imports')
    .set({ lease_holder: holder, lease_until: until })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_holder', '=', holder)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export interface ChunkCounts {
  rows: number;
  good: number;
  bad: number;
  duplicates: number;
  imported: number;
}

/**
 * The cursor moves past chunk `seq` with its counts, only while the import is still `state`,
 * held by `holder` and at that chunk (first in the chunk's transaction: it also locks the row,
 * so a cancel waits for the chunk). False: another process, a cancel or a crash got there first.
 */
export async function advance(db: DB, id: string, state: ImportState, holder: string, seq: number, c: ChunkCounts) {
  const res = await db
    .updateTable('imports')
    .set((eb) => ({
      next_seq: seq + 1,
      rows_done: eb('rows_done', '+', c.rows),
      good: eb('good', '+', c.good),
      bad: eb('bad', '+', c.bad),
      duplicates: eb('duplicates', '+', c.duplicates),
      imported: eb('imported', '+', c.imported),
      updated_at: new Date().toISOString(),
    }))
    .where('id', '=', id)
    .where('state', '=', state)
    .where('lease_holder', '=', holder)
    .where('next_seq', '=', seq)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export const insertErrors = (db: DB, rows: ImportErrorsTable[]) =>
  inBatches(rows, BATCH, (b) => db.insertInto('import_errors').values(b).execute());

export const insertKeys = (db: DB, rows: { import_id: string; key: string; row: number }[]) =>
  inBatches(rows, BATCH, (b) => db.insertInto('import_keys').values(b).execute());

export const insertLeadRows = (db: DB, rows: Insertable<LeadsTable>[]) =>
  inBatches(rows, BATCH, (b) => db.insertInto('leads').values(b).execute());

/** The earlier rows of the file holding any of these keys ("email:…", "phone:…"). */
export async function seenKeys(db: DB, id: string, keys: string[]) {
  const out = new Map<string, number>();
  await inBatches(keys, 500, async (b) => {
    const rows = await db
      .selectFrom('import_keys')
      .select(['key', 'row'])
      .where('import_id', '=', id)
      .where('key', 'in', b)
      .execute();
    for (const r of rows) out.set(r.key, r.row);
  });
  return out;
}

/**
 * Existing leads (not duplicates themselves, since `since`; the provider's only when `providerId`)
 * with one of these values in `field`, earliest first: intake's duplicate check (intake/duplicates.ts
 * duplicateQuery) for many values at once. This import's own leads are its rows, found by seenKeys.
 */
export async function existingLeads(
  db: DB,
  field: 'email' | 'phone',
  values: string[],
  since: string,
  providerId: string | null,
  importId: string,
  digestOf: (value: string) => string,
) {
  const out = new Map<string, string>();
  await inBatches(values, 500, async (b) => {
    // A lead whose contacts the retention purged is found by its digest (privacy/contact-digests.ts).
    const byDigest = new Map(b.map((v) => [digestOf(v), v]));
    const digestColumn = field === 'email' ? 'email_digest' : 'phone_digest';
    let q = db
      .selectFrom('leads')
      .select(['id', 'email', 'phone', digestColumn])
      .where((eb) => eb.or([eb(field, 'in', b), eb(digestColumn, 'in', [...byDigest.keys()])]))
      .where('status', '<>', 'duplicate')
      .where('created_at', '>=', since)
      .where((eb) => eb.or([eb('import_id', 'is', null), eb('import_id', '<>', importId)]));
    if (providerId !== null) q = q.where(sql<string>`${sql.ref('traffic_provider_id')} || ''`, '=', providerId);
    for (const r of await q.orderBy('created_at', 'desc').orderBy('id', 'desc').execute()) {
      const digest = (r as Record<string, string | null>)[digestColumn];
      out.set(digest === null ? r[field] : byDigest.get(digest)!, r.id);
    }
  });
  return out;
}

/** Uploads never started (or cut off by a crash) before `before`: their ids. */
export const staleUploads = (db: DB, before: string) =>
  db
    .selectFrom('imports')
    .select('id')
    .where('state', 'in', ['uploading', 'uploaded'])
    .where('updated_at', '<', before)
    .execute();
