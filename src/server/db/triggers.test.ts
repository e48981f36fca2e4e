import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql, type Kysely } from 'kysely';
import { emptyDatabase, forEachDatabase } from '../../../test/helpers.js';
import { isPostgres, openDatabase } from './database.js';
import { migrate } from './migrate.js';
import { dropTrigger, installTrigger, TRIGGERS } from './triggers/index.js';

// A freshly migrated database holds exactly the triggers db/triggers/ defines, as defined: a
// definition changed without a migration, or a migration's trigger with no definition, fails.

const normalize = (text: string) => text.replace(/\s+/g, ' ').trim();

interface Installed {
  /** Trigger name → its table and its SQL (SQLite: as written; PostgreSQL: pg_get_triggerdef, and the function it runs). */
  triggers: Record<string, { table: string; sql: string; function?: string }>;
  /** PostgreSQL: trigger function name → its source (prosrc) and pg_get_functiondef. */
  functions: Record<string, { source: string; sql: string }>;
}

async function installed(db: Kysely<any>): Promise<Installed> {
  if (!isPostgres(db)) {
    const rows = await sql<{ name: string; tbl_name: string; sql: string }>`
      select name, tbl_name, sql from sqlite_master where type = 'trigger'`.execute(db);
    return {
      triggers: Object.fromEntries(rows.rows.map((r) => [r.name, { table: r.tbl_name, sql: normalize(r.sql) }])),
      functions: {},
    };
  }
  const triggers = await sql<{ name: string; table: string; sql: string; function: string }>`
    select t.tgname as name, c.relname as table, pg_get_triggerdef(t.oid) as sql, p.proname as function
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
    join pg_proc p on p.oid = t.tgfoid
    where not t.tgisinternal and n.nspname = current_schema()`.execute(db);
  const functions = await sql<{ name: string; source: string; sql: string }>`
    select p.proname as name, p.prosrc as source, pg_get_functiondef(p.oid) as sql
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = current_schema() and p.prorettype = 'trigger'::regtype`.execute(db);
  return {
    triggers: Object.fromEntries(
      triggers.rows.map((r) => [r.name, { table: r.table, sql: r.sql, function: r.function }]),
    ),
    functions: Object.fromEntries(functions.rows.map((r) => [r.name, { source: r.source, sql: r.sql }])),
  };
}

const sorted = (names: Iterable<string>) => [...new Set(names)].sort();

forEachDatabase('triggers', (engine) => {
  test('a migrated database holds exactly the triggers db/triggers/ defines, and they reinstall as they were', async (t) => {
    const db = openDatabase(await emptyDatabase(t, engine));
    t.after(() => db.destroy());
    await migrate(db);
    const migrated = await installed(db);

    // The same triggers, on the same tables.
    assert.equal(new Set(TRIGGERS.map((d) => d.name)).size, TRIGGERS.length, 'each trigger defined once');
    assert.deepEqual(sorted(Object.keys(migrated.triggers)), sorted(TRIGGERS.map((d) => d.name)));
    for (const def of TRIGGERS) assert.equal(migrated.triggers[def.name].table, def.table, def.name);

    if (engine === 'sqlite') {
      // SQLite keeps the statement as written (its first keywords in capitals).
      for (const def of TRIGGERS) {
        assert.equal(
          migrated.triggers[def.name].sql.replace(/^CREATE TRIGGER /, 'create trigger '),
          normalize(def.sqlite.create),
          `${def.name}: the migrations installed another text than its definition`,
        );
      }
    } else {
      // The same functions, with the same source, each trigger running its own.
      assert.deepEqual(sorted(Object.keys(migrated.functions)), sorted(TRIGGERS.map((d) => d.postgres.function)));
      for (const def of TRIGGERS) {
        assert.equal(migrated.triggers[def.name].function, def.postgres.function, def.name);
        assert.equal(
          migrated.functions[def.postgres.function].source,
          def.postgres.source,
          `${def.name}: the migrations installed another function than its definition`,
        );
      }
    }

    // Dropped, nothing is left but the functions several triggers share (dropTrigger leaves
    // them); installed from the definitions, the database is as the migrations left it (on
    // PostgreSQL this compares the triggers' events, conditions and functions too).
    for (const def of TRIGGERS) await dropTrigger(db, def);
    const shared = TRIGGERS.filter((d) => d.postgres.function !== d.name).map((d) => d.postgres.function);
    assert.deepEqual(await installed(db), {
      triggers: {},
      functions: Object.fromEntries(Object.entries(migrated.functions).filter(([name]) => shared.includes(name))),
    });
    for (const def of TRIGGERS) await installTrigger(db, def);
    assert.deepEqual(await installed(db), migrated);
  });
});
