import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../database.js';
import type { TriggerDefinition } from '../triggers/index.js';
import { LEAD_EVENT_TRIGGERS } from '../triggers/lead-events.js';
import { leadAttemptsHealth } from '../triggers/partner-health.js';
import { ROLLUP_TRIGGERS } from '../triggers/rollups.js';

// Issue 30, item 2: on PostgreSQL the rollups', lead events' and partner health's trigger
// functions choose their statements with plpgsql IFs instead of each statement's WHERE (a
// statement whose WHERE is false still pays the executor's start: bench/RESULTS.md, "PostgreSQL's
// triggers"). Only the functions change, replaced in place: no trigger is dropped, so no lock on
// leads or lead_attempts is taken and intake does not wait for this migration. SQLite's triggers
// are as they were.
const REPLACED: TriggerDefinition[] = [...ROLLUP_TRIGGERS, ...LEAD_EVENT_TRIGGERS, leadAttemptsHealth];

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  for (const def of REPLACED) await sql.raw(def.postgres.create[0]).execute(db);
}
