import type { Static } from 'typebox';
import type { DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { isScoped } from '../../db/scope.js';
import { HttpProblem, invalid, notFound, type FieldError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { principalOf, type Principal } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { checkInjection, previewInjection } from '../injections/service.js';
import type { CreateInjection } from '../injections/schemas.js';
import { isTimeZone } from '../leads/dates.js';
import {
  deleteRule,
  insertRule,
  lastRuns,
  listRules,
  ruleById,
  updateRule,
  type LastRun,
  type RuleRow,
} from './queries.js';
import { nextOccurrence, WEEKDAYS, type Schedule } from './schedule.js';
import type { CreateRule, PreviewRuleBody, RuleFilter, UpdateRule } from './schemas.js';

// Recurring re-injection rules: "every day at 10:00 Berlin, leads refused in the last 7 days from
// campaign X go to flow Y". The use cases here keep the rules; runner.ts makes each run's job.

type Filter = Static<typeof RuleFilter>;
type Window = { time_zone: string; from: string; to: string };

/** A rule's settings, whole (a new one, or a stored one with a change applied). */
export interface Draft {
  name: string;
  filter: Filter;
  flow_id?: string;
  partner_ids?: string[];
  per_minute: number;
  window?: Window;
  reoffer: boolean;
  schedule: Schedule;
  enabled: boolean;
}

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The Leads filter of a run at `at`: last_days becomes the dates [at − N days, at). */
function runFilter(filter: Filter, at: number) {
  const { last_days, ...rest } = filter;
  return { ...rest, order: 'desc' as const, date_from: iso(at - last_days * DAY_MS), date_to: iso(at) };
}

/** The re-injection job a run of the rule at `at` makes (checked and created by injections/service.ts). */
export function injectionBody(d: Omit<Draft, 'name' | 'schedule' | 'enabled'>, at: number) {
  return {
    filter: runFilter(d.filter, at),
    ...(d.flow_id !== undefined && { flow_id: d.flow_id }),
    ...(d.partner_ids !== undefined && { partner_ids: d.partner_ids }),
    per_minute: d.per_minute,
    ...(d.window && { window: d.window }),
    reoffer: d.reoffer,
  } as Static<typeof CreateInjection>;
}

/** Every bad field at once: the injection's (filter, target, pace, window) as injections check them, and the schedule's. */
async function checkDraft(db: DB, principal: Principal, d: Draft) {
  const errors: FieldError[] = [];
  try {
    await checkInjection(db, principal, injectionBody(d, Date.now()));
  } catch (err) {
    if (!(err instanceof HttpProblem && err.errors)) throw err;
    errors.push(...err.errors);
  }
  if (!isTimeZone(d.schedule.time_zone))
    errors.push({ field: 'schedule.time_zone', message: `"${d.schedule.time_zone}" is not an IANA time zone` });
  if (errors.length) invalid(errors);
}

export const draftOf = (r: RuleRow): Draft => ({
  name: r.name,
  filter: JSON.parse(r.filter) as Filter,
  ...(r.flow_id !== null && { flow_id: r.flow_id }),
  ...(r.partner_ids !== null && { partner_ids: JSON.parse(r.partner_ids) as string[] }),
  per_minute: r.per_minute,
  ...(r.window !== null && { window: JSON.parse(r.window) as Window }),
  reoffer: Boolean(r.reoffer),
  schedule: JSON.parse(r.schedule) as Schedule,
  enabled: Boolean(r.enabled),
});

const columnsOf = (d: Draft) => ({
  name: d.name,
  filter: JSON.stringify(d.filter),
  flow_id: d.flow_id ?? null,
  partner_ids: d.partner_ids ? JSON.stringify(d.partner_ids) : null,
  per_minute: d.per_minute,
  window: d.window ? JSON.stringify(d.window) : null,
  reoffer: d.reoffer ? 1 : 0,
  schedule: JSON.stringify(d.schedule),
  enabled: d.enabled ? 1 : 0,
});

function ruleView(r: RuleRow, last: LastRun | undefined, now = Date.now()) {
  const d = draftOf(r);
  const next = d.enabled ? nextOccurrence(d.schedule, Math.max(now, Date.parse(r.armed_at) - 1)) : null;
  return {
    id: r.id,
    name: d.name,
    filter: d.filter,
    flow_id: r.flow_id,
    partner_ids: d.partner_ids ?? null,
    per_minute: d.per_minute,
    window: d.window ?? null,
    reoffer: d.reoffer,
    schedule: d.schedule,
    enabled: d.enabled,
    next_run_at: next === null ? null : iso(next),
    last_run: last ? { at: last.occurrence_at, injection_id: last.job_id, skipped: last.skipped } : null,
    created_by: r.created_by,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

async function view(db: DB, r: RuleRow) {
  return ruleView(r, (await lastRuns(db, [r.id])).get(r.id));
}

/** The rule, if the caller may see it: a scoped role sees only its own rules (404 alike). */
async function visibleRule(db: DB, actor: Actor, id: string): Promise<RuleRow> {
  const principal = principalOf(actor);
  const rule = await ruleById(db, id);
  if (!rule || (isScoped(principal.scope) && rule.created_by !== principal.operator.id)) return notFound('rule');
  return rule;
}

/** POST /api/injection-rules/preview: how many leads a run now would take. */
export async function previewRule(db: DB, actor: Actor, body: Static<typeof PreviewRuleBody>) {
  return previewInjection(db, actor, { filter: runFilter(body.filter, Date.now()) });
}

/** What the audit log keeps of a rule: its settings. */
const auditDetails = (d: Draft) => ({ ...d });

export async function createRule(db: DB, actor: Actor, body: Static<typeof CreateRule>) {
  const principal = principalOf(actor);
  const draft: Draft = { ...body, schedule: { days: [...WEEKDAYS], ...body.schedule } };
  await checkDraft(db, principal, draft);
  const now = nowIso();
  const rule: RuleRow = {
    id: newId(),
    ...columnsOf(draft),
    armed_at: now,
    created_by: principal.operator.id,
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (tx) => {
    await insertRule(tx, rule);
    await audit(tx, actor, {
      action: 'injection_rule.created',
      target_type: 'injection_rule',
      target_id: rule.id,
      details: auditDetails(draft),
    });
  });
  return ruleView(rule, undefined);
}

export async function getRule(db: DB, actor: Actor, id: string) {
  return view(db, await visibleRule(db, actor, id));
}

export async function listInjectionRules(db: DB, actor: Actor, query: { limit: number; cursor?: string }) {
  const principal = principalOf(actor);
  const after = decodeCursor(query.cursor, ['c', 'id'] as const);
  const rows = await listRules(db, after, query.limit + 1, isScoped(principal.scope) ? principal.operator.id : null);
  const page = pageOf(rows, query.limit, (r) => ({ c: r.created_at, id: r.id }));
  const last = await lastRuns(
    db,
    page.data.map((r) => r.id),
  );
  return { data: page.data.map((r) => ruleView(r, last.get(r.id))), next_cursor: page.next_cursor };
}

/** PATCH: the change applied to the stored rule, the whole checked again. flow_id or partner_ids replaces the target. */
export async function updateInjectionRule(db: DB, actor: Actor, id: string, body: Static<typeof UpdateRule>) {
  const rule = await visibleRule(db, actor, id);
  const before = draftOf(rule);
  const { window, flow_id, partner_ids, schedule, ...rest } = body;
  const retarget = flow_id !== undefined || partner_ids !== undefined;
  const draft: Draft = {
    ...before,
    ...rest,
    ...(retarget && { flow_id, partner_ids }),
    window: window === null ? undefined : (window ?? before.window),
    schedule: schedule ? { days: [...WEEKDAYS], ...schedule } : before.schedule,
  };
  await checkDraft(db, principalOf(actor), draft);
  const now = nowIso();
  // A new schedule, or the rule enabled again: occurrences before now never run.
  const rearm = schedule !== undefined || (draft.enabled && !before.enabled);
  const changes = { ...columnsOf(draft), updated_at: now, ...(rearm && { armed_at: now }) };
  await db.transaction().execute(async (tx) => {
    await updateRule(tx, id, changes);
    await audit(tx, actor, {
      action: 'injection_rule.updated',
      target_type: 'injection_rule',
      target_id: id,
      details: { changed: Object.keys(body), after: auditDetails(draft) },
    });
  });
  return getRule(db, actor, id);
}

/** DELETE: the rule and its runs' records; the jobs its runs made stay (with their rule_id). */
export async function deleteInjectionRule(db: DB, actor: Actor, id: string) {
  const rule = await visibleRule(db, actor, id);
  await db.transaction().execute(async (tx) => {
    await deleteRule(tx, id);
    await audit(tx, actor, {
      action: 'injection_rule.deleted',
      target_type: 'injection_rule',
      target_id: id,
      details: { name: rule.name },
    });
  });
}
