import { sql, type Insertable, type Kysely, type SqlBool } from 'kysely';
import { isPostgres } from '../../db/database.js';
import { providerIdInScope } from '../../db/record-scope.js';
import type { DataScope } from '../../db/scope.js';
import type { BlocklistEntriesTable, Database } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { shapeOf, type BlockKind } from './match-keys.js';
import { countShapes } from './blocklist-shapes.js';

/**
 * The unexpired entries (global or the provider's) whose key is one of `keysJson` (a JSON array,
 * one bound parameter however many keys). Written so both planners probe the key index once per
 * key whatever the list's length (measured: scanning the global entries or hashing the table
 * instead cost 2.7 ms at 20,000 entries): on PostgreSQL `= any(array(…))`, an index condition; on
 * SQLite `in (select … json_each)` with the scope as the unique index's own expression, so the
 * provider's index does not tempt it.
 */
function withKeys(db: Kysely<Database>, keysJson: string, providerId: string, now: string) {
  const keys = isPostgres(db)
    ? sql<SqlBool>`match_key = any(array(select jsonb_array_elements_text(cast(${keysJson} as jsonb))))`
    : sql<SqlBool>`match_key in (select value from json_each(${keysJson}))`;
  return db
    .selectFrom('blocklist_entries')
    .where(keys)
    .where(sql<string>`coalesce(traffic_provider_id, '')`, 'in', ['', providerId])
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
}

/**
 * The entry that blocks a lead, if one does: its keys are match-keys.ts leadKeys. Part of
 * intake's one read (intake/service.ts).
 */
export const blockingEntry = (db: Kysely<Database>, keysJson: string, providerId: string, now: string) =>
  withKeys(db, keysJson, providerId, now).select(['id', 'kind', 'value', 'traffic_provider_id']).limit(sql.lit(1)); // a literal: intake/duplicates.ts

/** Every entry matching any of the keys: a CSV import's chunk at once. */
export const entriesWithKeys = (db: Kysely<Database>, keysJson: string, providerId: string, now: string) =>
  withKeys(db, keysJson, providerId, now).select(['match_key', 'id', 'kind', 'value', 'traffic_provider_id']).execute();

export type BlockingEntry = { id: string; kind: BlockKind; value: string; traffic_provider_id: string | null };

const entryColumns = [
  'blocklist_entries.id',
  'blocklist_entries.kind',
  'blocklist_entries.value',
  'blocklist_entries.traffic_provider_id',
  'traffic_providers.name as traffic_provider_name',
  'blocklist_entries.expires_at',
  'blocklist_entries.note',
  'blocklist_entries.created_by',
  'operators.name as created_by_name',
  'blocklist_entries.created_at',
] as const;

const entriesWithNames = (db: Kysely<Database>) =>
  db
    .selectFrom('blocklist_entries')
    .leftJoin('traffic_providers', 'traffic_providers.id', 'blocklist_entries.traffic_provider_id')
    .leftJoin('operators', 'operators.id', 'blocklist_entries.created_by')
    .select(entryColumns);

export type EntryRow = Awaited<ReturnType<ReturnType<typeof entriesWithNames>['execute']>>[number];

/** A scoped reader sees its providers' entries only (not the global ones: they hold others' contacts). */
function inScope<Q extends { where: (...a: any[]) => Q }>(q: Q, scope: DataScope): Q {
  const cond = providerIdInScope(scope, 'blocklist_entries.traffic_provider_id');
  return cond ? q.where(cond) : q;
}

export interface EntryFilter {
  limit: number;
  cursor?: string;
  kind?: BlockKind;
  /** A provider's id, or 'global'. */
  providerId?: string;
  /** Match keys: entries for one value (any kind it could be). */
  keys?: string[];
  includeExpired: boolean;
  now: string;
}

/** One page of entries, newest first. */
export async function entryPage(db: Kysely<Database>, f: EntryFilter, scope: DataScope) {
  const after = decodeCursor(f.cursor, ['created_at', 'id']);
  let q = inScope(entriesWithNames(db), scope)
    .orderBy('blocklist_entries.created_at', 'desc')
    .orderBy('blocklist_entries.id', 'desc')
    .limit(f.limit + 1);
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('blocklist_entries.created_at', '<', after.created_at),
        eb.and([eb('blocklist_entries.created_at', '=', after.created_at), eb('blocklist_entries.id', '<', after.id)]),
      ]),
    );
  if (f.kind) q = q.where('blocklist_entries.kind', '=', f.kind);
  if (f.providerId === 'global') q = q.where('blocklist_entries.traffic_provider_id', 'is', null);
  else if (f.providerId) q = q.where('blocklist_entries.traffic_provider_id', '=', f.providerId);
  if (f.keys) q = f.keys.length ? q.where('blocklist_entries.match_key', 'in', f.keys) : q.where(sql<boolean>`1 = 0`);
  if (!f.includeExpired)
    q = q.where((eb) =>
      eb.or([eb('blocklist_entries.expires_at', 'is', null), eb('blocklist_entries.expires_at', '>', f.now)]),
    );
  return pageOf(await q.execute(), f.limit, (r) => ({ created_at: r.created_at, id: r.id }));
}

export const findEntry = (db: Kysely<Database>, id: string, scope: DataScope) =>
  inScope(entriesWithNames(db), scope).where('blocklist_entries.id', '=', id).executeTakeFirst();

/** The entry with this key in this scope (null: global), if any. */
export const entryWithKey = (db: Kysely<Database>, key: string, providerId: string | null) =>
  db
    .selectFrom('blocklist_entries')
    .select(['id'])
    .where('match_key', '=', key)
    .where(sql<string>`coalesce(traffic_provider_id, '')`, '=', providerId ?? '')
    .executeTakeFirst();

/**
 * Inserts entries, leaving out those whose key is already listed in their scope, and counts the
 * new ones' shapes (blocklist-shapes.ts); answers how many went in. In the caller's transaction.
 */
export async function insertEntries(db: Kysely<Database>, rows: Insertable<BlocklistEntriesTable>[]) {
  let added = 0;
  const shapes = new Map<string, number>();
  for (let i = 0; i < rows.length; i += 500) {
    const inserted = await db
      .insertInto('blocklist_entries')
      .values(rows.slice(i, i + 500))
      .onConflict((oc) => oc.doNothing())
      .returning(['kind', 'match_key'])
      .execute();
    added += inserted.length;
    for (const r of inserted) {
      const shape = shapeOf(r.kind, r.match_key);
      shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    }
  }
  await countShapes(db, shapes);
  return added;
}

export const patchEntry = (
  db: Kysely<Database>,
  id: string,
  patch: { expires_at?: string | null; note?: string | null },
) => db.updateTable('blocklist_entries').set(patch).where('id', '=', id).execute();

/** Deletes an entry and takes it out of its shape's count. In the caller's transaction. */
export async function deleteEntry(db: Kysely<Database>, id: string) {
  const gone = await db.deleteFrom('blocklist_entries').where('id', '=', id).returning(['kind', 'match_key']).execute();
  await countShapes(db, new Map(gone.map((r) => [shapeOf(r.kind, r.match_key), -1])));
}

/** Email and phone entries whose key is still the clear normal form (stored before keys were hashed). */
export const clearContactKeys = (db: Kysely<Database>) =>
  db
    .selectFrom('blocklist_entries')
    .select(['id', 'match_key'])
    .where('kind', 'in', ['email', 'phone'])
    .where((eb) => eb.or([eb('match_key', 'like', 'email:%'), eb('match_key', 'like', 'phone:%')]))
    .execute();

export const setMatchKey = (db: Kysely<Database>, id: string, key: string) =>
  db.updateTable('blocklist_entries').set({ match_key: key }).where('id', '=', id).execute();
