import type { Kysely } from 'kysely';
import { nowIso } from './ids.js';
import type { Database } from './tables.js';

// The settings table: one JSON value per key (allow-list, public base URL, licence, installation
// id). Read and written only through these, so every value is JSON the same way.

/** The stored value of `key`, or `fallback` when it was never set. */
export async function readSetting<T>(db: Kysely<Database>, key: string, fallback: T): Promise<T> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row ? (JSON.parse(row.value) as T) : fallback;
}

/** Sets `key` to `value`, replacing what was there. */
export async function writeSetting(db: Kysely<Database>, key: string, value: unknown): Promise<void> {
  const json = JSON.stringify(value);
  const updated_at = nowIso();
  await db
    .insertInto('settings')
    .values({ key, value: json, updated_at })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: json, updated_at }))
    .execute();
}

/** Sets `key` only if it was never set (concurrent first calls keep one value); returns the value in force. */
export async function initSetting<T>(db: Kysely<Database>, key: string, value: T): Promise<T> {
  await db
    .insertInto('settings')
    .values({ key, value: JSON.stringify(value), updated_at: nowIso() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  return readSetting(db, key, value);
}

export async function deleteSetting(db: Kysely<Database>, key: string): Promise<boolean> {
  const res = await db.deleteFrom('settings').where('key', '=', key).executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}
