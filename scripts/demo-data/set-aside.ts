// A load into a database without leads sets the leads' and attempts' secondary indexes and
// triggers aside while the rows go in, then builds each index once and adds the rollups in one
// grouped statement per table (db/triggers/rollups.ts rollupsOfAllLeads): an index built from
// sorted rows and a grouped count cost a fraction of keeping 30 indexes and 4 rollups row by row.
//
// Nothing is lost if the load stops half-way: what was set aside is written in `settings`
// (SET_ASIDE_KEY) in the same transaction as the drops, and taken off it as it is put back; a
// load that dies before putting all of it back leaves the key, and the next run of the command
// puts the rest back first. A database without leads has nothing the triggers would have done
// otherwise: the event triggers write only for subscriptions, which a database without leads may
// have, but the demo leads are not real traffic and must not reach a webhook.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/server/db/tables.js';
import { isPostgres } from '../../src/server/db/database.js';
import { deleteSetting, readSetting, writeSetting } from '../../src/server/db/settings.js';
import { dropTrigger, installTrigger, TRIGGERS } from '../../src/server/db/triggers/index.js';
import { rollupsOfAllLeads } from '../../src/server/db/triggers/rollups.js';

export const SET_ASIDE_KEY = 'demo_data.set_aside';
const TABLES = ['leads', 'lead_attempts'];
const trigger = (name: string) => TRIGGERS.find((t) => t.name === name)!;

interface SetAside {
  indexes: { name: string; sql: string }[];
  triggers: string[];
}

/** The secondary indexes of the loaded tables with the SQL that makes them (constraints' own indexes stay). */
async function secondaryIndexes(db: Kysely<Database>): Promise<{ name: string; sql: string }[]> {
  const list = TABLES.map((t) => `'${t}'`).join(', ');
  const { rows } = isPostgres(db)
    ? await sql<{ name: string; sql: string }>`
        select indexname as name, indexdef as sql from pg_indexes
        where schemaname = current_schema() and tablename in (${sql.raw(list)})
          and indexname not in (select conname from pg_constraint where conrelid in (${sql.raw(
            TABLES.map((t) => `'${t}'::regclass`).join(', '),
          )}))
        order by indexname`.execute(db)
    : await sql<{ name: string; sql: string }>`
        select name, sql from sqlite_master
        where type = 'index' and tbl_name in (${sql.raw(list)}) and sql is not null order by name`.execute(db);
  return rows;
}

/** Drops the loaded tables' secondary indexes and triggers, and records them, in one transaction. */
export async function setAside(db: Kysely<Database>): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const aside: SetAside = {
      indexes: await secondaryIndexes(tx),
      triggers: TRIGGERS.filter((t) => TABLES.includes(t.table)).map((t) => t.name),
    };
    await writeSetting(tx, SET_ASIDE_KEY, aside);
    for (const index of aside.indexes) await sql.raw(`drop index ${index.name}`).execute(tx);
    for (const name of aside.triggers) await dropTrigger(tx, trigger(name));
  });
}

/**
 * Puts back what setAside recorded, if anything: each index built in a transaction of its own
 * that also takes it off the record (one transaction for them all would hold every new page in
 * SQLite's WAL until the end: 15 GB at 10,000,000 leads, each later build reading through it),
 * then the rollups added from the leads and the triggers installed, in one last transaction
 * that deletes the record. Returns whether there was anything.
 */
export async function putBack(db: Kysely<Database>, onStep?: (done: number, total: number) => void): Promise<boolean> {
  const aside = await readSetting<SetAside | null>(db, SET_ASIDE_KEY, null);
  if (!aside) return false;
  const rollups = rollupsOfAllLeads();
  const total = aside.indexes.length + rollups.length + 1;
  let done = 0;
  // SQLite sorts an index's entries with helper threads when allowed (a bigger sort than the
  // page cache is merged from runs sorted in parallel).
  if (!isPostgres(db)) await sql`pragma threads = 2`.execute(db);
  while (aside.indexes.length) {
    const index = aside.indexes[0];
    await db.transaction().execute(async (tx) => {
      // Memory for PostgreSQL's index sorts (SQLite's come from the page cache the loader set).
      if (isPostgres(tx)) await sql`set local maintenance_work_mem = '1GB'`.execute(tx);
      await sql.raw(index.sql).execute(tx);
      await writeSetting(tx, SET_ASIDE_KEY, { ...aside, indexes: aside.indexes.slice(1) });
    });
    aside.indexes.shift();
    onStep?.(++done, total);
  }
  await db.transaction().execute(async (tx) => {
    for (const statement of rollups) {
      await sql.raw(statement).execute(tx);
      onStep?.(++done, total);
    }
    for (const name of aside.triggers) await installTrigger(tx, trigger(name));
    await deleteSetting(tx, SET_ASIDE_KEY);
    onStep?.(++done, total);
  });
  return true;
}
