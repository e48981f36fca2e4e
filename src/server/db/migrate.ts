import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { DB } from './database.js';
import * as foundation from './migrations/20261121T000000Z_foundation.js';

// Listed here rather than read from the folder, so the same list works from src/ (tsx) and
// dist/ (compiled). Append new migrations; never edit or reorder landed ones.
const migrations: Record<string, Migration> = {
  '20261121T000000Z_foundation': foundation,
};

const provider: MigrationProvider = { getMigrations: async () => migrations };

export async function migrate(db: DB): Promise<{ level: string | null }> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`Migration ${failed?.migrationName ?? '?'} failed: ${(error as Error).message ?? error}`);
  }
  const all = await migrator.getMigrations();
  const applied = all.filter((m) => m.executedAt);
  return { level: applied.at(-1)?.name ?? null };
}
