import { sql, type DatabaseIntrospector } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { isPostgres, type DB } from './database.js';
import * as foundation from './migrations/20261121T000000Z_foundation.js';

// Listed here rather than read from the folder, so the same list works from src/ (tsx) and
// dist/ (compiled). Append new migrations; never edit or reorder landed ones.
const migrations: Record<string, Migration> = {
  '20261121T000000Z_foundation': foundation,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

/**
 * The migrator's only use of introspection is "does this table exist". Kysely's PostgreSQL
 * introspector answers it by reading every column of every schema through catalog functions
 * that fail ("schema … does not exist") when another schema is dropped meanwhile, as parallel
 * test runs and shared servers do. Answer it from our own schema only.
 */
function scopedToSchema(db: DB, schema: string): DB {
  const introspection: DatabaseIntrospector = {
    getSchemas: () => db.introspection.getSchemas(),
    getTables: async () => {
      const { rows } = await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${schema}`.execute(db);
      return rows.map((r) => ({ name: r.name, schema, isView: false, isForeign: false, columns: [] }));
    },
  };
  return new Proxy(db, {
    get(target, prop) {
      if (prop === 'introspection') return introspection;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export async function migrate(db: DB): Promise<{ level: string | null }> {
  // Kysely looks for its bookkeeping tables in every schema unless told which one; on a
  // PostgreSQL server shared by several schemas (parallel tests, two installs) it would find
  // another schema's kysely_migration_lock and skip creating its own. Pin it to ours.
  const migrationTableSchema =
    isPostgres(db)
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0].s
      : undefined;
  const migrator = migrationTableSchema
    ? new Migrator({ db: scopedToSchema(db, migrationTableSchema), provider, migrationTableSchema })
    : new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`);
  }
  const all = await migrator.getMigrations();
  const applied = all.filter((m) => m.executedAt);
  return { level: applied.at(-1)?.name ?? null };
}
