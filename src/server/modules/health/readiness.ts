import type { Kysely } from 'kysely';
import { MIGRATION_NAMES, missingMigrations } from '../../db/migrate.js';
import { databaseStatus } from '../../db/unavailable.js';

export { RETRY_AFTER_S } from '../../db/unavailable.js';

export interface Readiness {
  ok: boolean;
  /** The database answers (within 3 s) and no write is failing for an outage reason (a full disk). */
  databaseOk: boolean;
  migrations: { ok: boolean; applied: number; expected: number; missing: string[] };
  /** What went wrong, for the log only: driver errors can name hosts and users, and health is public. */
  error: unknown;
}

/**
 * Ready to serve: the database answers a real query and can write (databaseStatus), and every
 * migration this code needs is applied (newer code on an older schema would fail on its first
 * query). A database migrated further than this code knows is fine: a rolling upgrade runs old
 * and new code side by side on the new schema.
 */
export async function readiness(db: Kysely<any>): Promise<Readiness> {
  const expected = MIGRATION_NAMES.length;
  const status = await databaseStatus(db);
  if (!status.reachable) {
    return {
      ok: false,
      databaseOk: false,
      migrations: { ok: false, applied: 0, expected, missing: [] },
      error: status.error,
    };
  }
  try {
    const missing = await missingMigrations(db);
    const migrated = missing.length === 0;
    return {
      ok: status.ok && migrated,
      databaseOk: status.ok,
      migrations: { ok: migrated, applied: expected - missing.length, expected, missing },
      error: status.error ?? (migrated ? null : `${missing.length} migration(s) not applied`),
    };
  } catch (error) {
    // No schema_migrations to read: a database never migrated.
    return {
      ok: false,
      databaseOk: status.ok,
      migrations: { ok: false, applied: 0, expected, missing: [...MIGRATION_NAMES] },
      error,
    };
  }
}
