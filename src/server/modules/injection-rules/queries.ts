import type { Kysely, Selectable } from 'kysely';
import type { Database, InjectionRulesTable } from '../../db/tables.js';

type DB = Kysely<Database>;

export type RuleRow = Selectable<InjectionRulesTable>;

export interface LastRun {
  rule_id: string;
  occurrence_at: string;
  job_id: string | null;
  skipped: string | null;
}

export const insertRule = (db: DB, rule: RuleRow) => db.insertInto('injection_rules').values(rule).execute();

export const ruleById = (db: DB, id: string) =>
  db.selectFrom('injection_rules').selectAll().where('id', '=', id).executeTakeFirst();

export const updateRule = (db: DB, id: string, changes: Partial<RuleRow>) =>
  db.updateTable('injection_rules').set(changes).where('id', '=', id).execute();

export async function deleteRule(db: DB, id: string) {
  await db.deleteFrom('injection_rule_runs').where('rule_id', '=', id).execute();
  await db.deleteFrom('injection_rules').where('id', '=', id).execute();
}

/** Newest first, after the cursor; `createdBy` narrows to one operator's rules (a scoped role). */
export function listRules(db: DB, after: { c: string; id: string } | null, limit: number, createdBy: string | null) {
  let q = db.selectFrom('injection_rules').selectAll();
  if (createdBy !== null) q = q.where('created_by', '=', createdBy);
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.c, after.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Each rule's latest run. */
export async function lastRuns(db: DB, ruleIds: string[]): Promise<Map<string, LastRun>> {
  const out = new Map<string, LastRun>();
  if (!ruleIds.length) return out;
  const rows = await db
    .selectFrom('injection_rule_runs as r')
    .select(['r.rule_id', 'r.occurrence_at', 'r.job_id', 'r.skipped'])
    .where('r.rule_id', 'in', ruleIds)
    .where(({ eb, selectFrom }) =>
      eb(
        'r.occurrence_at',
        '=',
        selectFrom('injection_rule_runs as l')
          .select((e) => e.fn.max('l.occurrence_at').as('m'))
          .whereRef('l.rule_id', '=', 'r.rule_id'),
      ),
    )
    .execute();
  for (const r of rows) out.set(r.rule_id, r);
  return out;
}

// The runner's statements (runner.ts).

export const enabledRules = (db: DB) =>
  db.selectFrom('injection_rules').selectAll().where('enabled', '=', 1).orderBy('created_at').execute();

export async function hasRun(db: DB, ruleId: string, occurrenceAt: string) {
  const row = await db
    .selectFrom('injection_rule_runs')
    .select('rule_id')
    .where('rule_id', '=', ruleId)
    .where('occurrence_at', '=', occurrenceAt)
    .executeTakeFirst();
  return row !== undefined;
}

/** The occurrence's run, recorded once: false when another process (or an earlier tick) recorded it first. */
export async function insertRun(
  db: DB,
  run: { rule_id: string; occurrence_at: string; job_id: string | null; skipped: string | null; at: string },
) {
  const res = await db
    .insertInto('injection_rule_runs')
    .values(run)
    .onConflict((oc) => oc.columns(['rule_id', 'occurrence_at']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** The rule's creator and role as they are now (null: no such operator). */
export const creatorOf = (db: DB, operatorId: string) =>
  db
    .selectFrom('operators')
    .innerJoin('roles', 'roles.id', 'operators.role_id')
    .select([
      'operators.id',
      'operators.email',
      'operators.name',
      'operators.role_id',
      'operators.status',
      'operators.timezone',
      'roles.name as role_name',
      'roles.builtin',
      'roles.permissions',
      'roles.scope_traffic_provider_ids',
      'roles.scope_partner_ids',
    ])
    .where('operators.id', '=', operatorId)
    .executeTakeFirst();
