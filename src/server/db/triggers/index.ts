import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../database.js';
import { ATTEMPT_FOLD_TRIGGERS } from './attempt-folds.js';
import { AUTH_GENERATION_TRIGGERS } from './auth-generation.js';
import { CAP_TRIGGERS } from './caps.js';
import type { TriggerDefinition } from './define.js';
import { LEAD_EVENT_TRIGGERS } from './lead-events.js';
import { LEAD_FOLD_TRIGGERS } from './lead-folds.js';
import { PARTNER_HEALTH_TRIGGERS } from './partner-health.js';
import { FLAGS_ROLLUP_TRIGGERS, ROLLUP_TRIGGERS } from './rollups.js';

// Every trigger the database has, as it is today, on both engines (on PostgreSQL with its
// function). The migrations installed them; these definitions say what they do now, and
// triggers.test.ts checks that a freshly migrated database holds exactly these.
//
// To change a trigger: edit its definition here, then add a migration (registered in
// migrate.ts) that imports the definition and reinstalls it: dropTrigger, then installTrigger.
// A new trigger: a definition here, listed below, and a migration installing it. Never edit a
// released migration.

export type { TriggerDefinition } from './define.js';

export const TRIGGERS: readonly TriggerDefinition[] = [
  ...LEAD_EVENT_TRIGGERS,
  ...CAP_TRIGGERS,
  ...PARTNER_HEALTH_TRIGGERS,
  ...ROLLUP_TRIGGERS,
  ...FLAGS_ROLLUP_TRIGGERS,
  ...AUTH_GENERATION_TRIGGERS,
  ...ATTEMPT_FOLD_TRIGGERS,
  ...LEAD_FOLD_TRIGGERS,
];

async function run(db: Kysely<any>, statements: string[]) {
  for (const statement of statements) await sql.raw(statement).execute(db);
}

/** Creates the trigger (on PostgreSQL: creates or replaces its function, then the trigger). */
export async function installTrigger(db: Kysely<any>, def: TriggerDefinition): Promise<void> {
  await run(db, isPostgres(db) ? def.postgres.create : [def.sqlite.create]);
}

/** Drops the trigger (on PostgreSQL: then its function, unless other triggers share it). */
export async function dropTrigger(db: Kysely<any>, def: TriggerDefinition): Promise<void> {
  await run(db, isPostgres(db) ? def.postgres.drop : [def.sqlite.drop]);
}
