import type { Static } from 'typebox';
import type { DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { isScoped } from '../../db/scope.js';
import type { InjectionState } from '../../db/tables.js';
import { csvCell } from '../../http/csv.js';
import { maskInText } from '../../privacy/mask.js';
import { conflict, HttpProblem, invalid, notFound, type FieldError } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { principalOf, type Principal } from '../../types.js';
import { audit, SYSTEM, type Actor } from '../audit/service.js';
import { isTimeZone } from '../leads/dates.js';
import { isLiveFlow, livePartnerCountries } from '../leads/queries.js';
import { matchingLeadIds } from '../leads/search-queries.js';
import { leadFilter, type LeadFilter, type SearchParams } from '../leads/search.js';
import {
  countsOf,
  importedLeads,
  insertItems,
  insertJob,
  jobById,
  listJobs,
  reportRows,
  resetBucket,
  setState,
  skipPending,
  type Counts,
  type JobRow,
} from './queries.js';
import type { CreateInjection, PreviewBody } from './schemas.js';

// Re-injection jobs: stored leads sent again, at a pace, to a flow or to chosen partners. The
// use cases here create, read and steer a job; worker.ts sends its leads.

type Selection = Static<typeof PreviewBody>;
type CreateBody = Static<typeof CreateInjection>;

/** Field errors of a nested part, named from the body ("filter.status"). */
function nested<T>(prefix: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof HttpProblem && err.errors)
      invalid(err.errors.map((e) => ({ field: `${prefix}.${e.field}`, message: e.message })));
    throw err;
  }
}

/** The leads a selection names, in the caller's scope (never beyond it), as a checked filter. */
function selectionFilter(body: Selection, principal: Principal): LeadFilter {
  if ((body.filter === undefined) === (body.lead_ids === undefined))
    invalid([{ field: 'filter', message: 'or lead_ids: send exactly one of the two' }]);
  if (body.filter) {
    const params = { ...body.filter, date_type: body.filter.date_type ?? 'registration' } as SearchParams;
    return nested('filter', () => leadFilter(params, principal));
  }
  return {
    dateType: 'registration',
    order: 'desc',
    from: null,
    to: null,
    status: [],
    country: [],
    ids: body.lead_ids!,
    subIds: {},
    flags: 0,
    q: null,
    scope: principal.scope,
  };
}

/** POST /api/injections/preview: how many leads a job of this selection would hold. */
export async function previewInjection(db: DB, actor: Actor, body: Selection) {
  const f = selectionFilter(body, principalOf(actor));
  const q = await matchingLeadIds(db, f);
  const row = await db
    .selectFrom(q.as('m'))
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .executeTakeFirstOrThrow();
  return { count: Number(row.n) };
}

/** Every bad target, pace, window or start named at once. */
async function checkJob(db: DB, body: CreateBody, principal: Principal, earlier: FieldError[]) {
  const errors: FieldError[] = [...earlier];
  const partnerScope = principal.scope.partnerIds;
  if (body.flow_id !== undefined && body.partner_ids !== undefined)
    errors.push({ field: 'partner_ids', message: 'must not be sent together with flow_id: choose a flow or partners' });
  else if (body.flow_id === undefined && body.partner_ids === undefined)
    errors.push({ field: 'flow_id', message: 'or partner_ids is required: where the leads go' });
  // A role limited to some partners sends only to them, never through a flow (which could hand a lead to any partner).
  if (partnerScope !== null && body.flow_id !== undefined)
    errors.push({
      field: 'flow_id',
      message: 'is not allowed: your role is limited to some partners; use partner_ids',
    });
  else if (body.flow_id !== undefined && !(await isLiveFlow(db, body.flow_id)))
    errors.push({ field: 'flow_id', message: 'names no flow (or an archived one)' });
  for (const [i, id] of (body.partner_ids ?? []).entries()) {
    const known = (partnerScope === null || partnerScope.includes(id)) && (await livePartnerCountries(db, id)) !== null;
    if (!known) errors.push({ field: `partner_ids[${i}]`, message: `"${id}" names no partner (or an archived one)` });
  }
  if (body.window) {
    if (!isTimeZone(body.window.time_zone))
      errors.push({ field: 'window.time_zone', message: `"${body.window.time_zone}" is not an IANA time zone` });
    if (body.window.from === body.window.to)
      errors.push({ field: 'window.to', message: 'must differ from window.from (leave window out for any time)' });
  }
  if (body.start_at !== undefined && Number.isNaN(Date.parse(body.start_at)))
    errors.push({ field: 'start_at', message: 'must be an ISO 8601 date-time' });
  if (errors.length) invalid(errors);
}

export function injectionView(job: JobRow, counts: Counts) {
  return {
    id: job.id,
    state: job.state,
    flow_id: job.flow_id,
    partner_ids: job.partner_ids === null ? null : (JSON.parse(job.partner_ids) as string[]),
    per_minute: job.per_minute,
    start_at: job.start_at,
    window: job.window === null ? null : JSON.parse(job.window),
    reoffer: Boolean(job.reoffer),
    selection: JSON.parse(job.selection),
    rule_id: job.rule_id,
    ...counts,
    created_by: job.created_by,
    created_at: job.created_at,
    updated_at: job.updated_at,
    finished_at: job.finished_at,
  };
}

async function view(db: DB, job: JobRow) {
  return injectionView(job, (await countsOf(db, [job.id])).get(job.id)!);
}

/** The body checked whole (every bad field named at once: the selection's and the job's); its selection as a filter. */
export async function checkInjection(db: DB, principal: Principal, body: CreateBody): Promise<LeadFilter> {
  let f: LeadFilter | null = null;
  let selectionErrors: FieldError[] = [];
  try {
    f = selectionFilter(body, principal);
  } catch (err) {
    if (!(err instanceof HttpProblem && err.errors)) throw err;
    selectionErrors = err.errors;
  }
  await checkJob(db, body, principal, selectionErrors);
  return f!;
}

/** A job a recurring rule's run makes (modules/injection-rules): `claim` records the run in the job's transaction. */
export interface RuleRun {
  ruleId: string;
  claim(tx: DB, jobId: string): Promise<void>;
}

/** POST /api/injections: the job and its leads (chosen now, once), audited with who, what and how many. */
export async function createInjection(db: DB, actor: Actor, body: CreateBody, run?: RuleRun) {
  const principal = principalOf(actor);
  const f = await checkInjection(db, principal, body);
  const now = nowIso();
  const startAt = body.start_at === undefined ? null : new Date(body.start_at).toISOString();
  const selection = body.filter ?? { lead_ids: body.lead_ids!.length };
  const job: JobRow = {
    id: newId(),
    state: startAt !== null && startAt > now ? 'scheduled' : 'running',
    flow_id: body.flow_id ?? null,
    partner_ids: body.partner_ids ? JSON.stringify(body.partner_ids) : null,
    per_minute: body.per_minute,
    start_at: startAt,
    window: body.window ? JSON.stringify(body.window) : null,
    reoffer: body.reoffer ? 1 : 0,
    selection: JSON.stringify(selection),
    total: 0,
    created_by: principal.operator.id,
    created_at: now,
    updated_at: now,
    finished_at: null,
    tokens: 0,
    tokens_at: null,
    lease_holder: null,
    lease_until: null,
    rule_id: run?.ruleId ?? null,
  };
  const leads = await matchingLeadIds(db, f);
  await db.transaction().execute(async (tx) => {
    if (run) await run.claim(tx, job.id);
    await insertJob(tx, job);
    job.total = await insertItems(tx, job.id, leads);
    if (job.total === 0) Object.assign(job, { state: 'done', finished_at: now });
    await tx
      .updateTable('injection_jobs')
      .set({ total: job.total, state: job.state, finished_at: job.finished_at })
      .where('id', '=', job.id)
      .execute();
    await audit(tx, actor, {
      action: 'injection.created',
      target_type: 'injection',
      target_id: job.id,
      ...(run && { via: 'system' as const }),
      details: {
        ...(run && { rule_id: run.ruleId }),
        selection,
        leads: job.total,
        ...(body.flow_id ? { flow_id: body.flow_id } : { partner_ids: body.partner_ids }),
        per_minute: body.per_minute,
      },
    });
  });
  return view(db, job);
}

/** The job, if the caller may see it: a scoped role sees only its own jobs (404 alike). */
async function visibleJob(db: DB, actor: Actor, id: string): Promise<JobRow> {
  const principal = principalOf(actor);
  const job = await jobById(db, id);
  if (!job || (isScoped(principal.scope) && job.created_by !== principal.operator.id)) return notFound('injection');
  return job;
}

export async function getInjection(db: DB, actor: Actor, id: string) {
  return view(db, await visibleJob(db, actor, id));
}

export async function listInjections(db: DB, actor: Actor, query: { limit: number; cursor?: string }) {
  const principal = principalOf(actor);
  const after = decodeCursor(query.cursor, ['c', 'id'] as const);
  const rows = await listJobs(db, after, query.limit + 1, isScoped(principal.scope) ? principal.operator.id : null);
  const page = pageOf(rows, query.limit, (r) => ({ c: r.created_at, id: r.id }));
  const counts = await countsOf(
    db,
    page.data.map((j) => j.id),
  );
  return { data: page.data.map((j) => injectionView(j, counts.get(j.id)!)), next_cursor: page.next_cursor };
}

const STEPS = {
  pause: { from: ['scheduled', 'running'], to: 'paused', action: 'injection.paused' },
  resume: { from: ['paused'], to: 'running', action: 'injection.resumed' },
  cancel: { from: ['scheduled', 'running', 'paused'], to: 'cancelled', action: 'injection.cancelled' },
} as const;

/** Pause, resume or cancel: 409 naming the job's state when the step does not apply to it. */
export async function steerInjection(db: DB, actor: Actor, id: string, step: keyof typeof STEPS) {
  const job = await visibleJob(db, actor, id);
  const { from, action } = STEPS[step];
  // A resumed job whose start has not come waits for it again.
  const to: InjectionState =
    step === 'resume' && job.start_at !== null && job.start_at > nowIso() ? 'scheduled' : STEPS[step].to;
  const now = nowIso();
  const moved = await db.transaction().execute(async (tx) => {
    if (!(await setState(tx, id, [...from], to, now))) return false;
    if (step === 'cancel') await skipPending(tx, id, 'the job was cancelled', now);
    if (step === 'resume') await resetBucket(tx, id);
    await audit(tx, actor, { action, target_type: 'injection', target_id: id, details: { from: job.state } });
    return true;
  });
  if (!moved) {
    const state = (await jobById(db, id))?.state ?? job.state;
    conflict(`This job is ${state}; only a job that is ${from.join(' or ')} can be ${STEPS[step].to}.`);
  }
  return getInjection(db, actor, id);
}

const REPORT_COLUMNS = ['lead_id', 'state', 'reason', 'partner_id', 'partner_name', 'at'] as const;

/** GET /api/injections/{id}/report.csv: one row per lead (no contacts: ids, states, reasons, partners, times). */
export async function injectionReport(db: DB, actor: Actor, id: string) {
  const job = await visibleJob(db, actor, id);
  const rows = await reportRows(db, job.id);
  // A reason quotes partners' answers, which may echo the lead's contacts: masked, always.
  const masked = rows.map((r) => ({ ...r, reason: r.reason === null ? null : maskInText(r.reason, r) }));
  const lines = [REPORT_COLUMNS.join(','), ...masked.map((r) => REPORT_COLUMNS.map((c) => csvCell(r[c])).join(','))];
  return { fileName: `injection-${job.id}.csv`, csv: lines.join('\r\n') + '\r\n' };
}

/**
 * The re-injection job of a CSV import of mode route (modules/imports), made in the transaction
 * that finishes the import: its leads are the import's (status new), sent at its pace to its
 * flow or partners. Audited as a job the import's operator created.
 */
export async function createImportInjection(
  tx: DB,
  imp: {
    id: string;
    createdBy: string | null;
    route: { flow_id?: string; partner_ids?: string[]; per_minute: number };
  },
): Promise<string> {
  const now = nowIso();
  const job: JobRow = {
    id: newId(),
    state: 'running',
    flow_id: imp.route.flow_id ?? null,
    partner_ids: imp.route.partner_ids ? JSON.stringify(imp.route.partner_ids) : null,
    per_minute: imp.route.per_minute,
    start_at: null,
    window: null,
    reoffer: 0,
    selection: JSON.stringify({ import_id: imp.id }),
    total: 0,
    created_by: imp.createdBy,
    created_at: now,
    updated_at: now,
    finished_at: null,
    tokens: 0,
    tokens_at: null,
    lease_holder: null,
    lease_until: null,
    rule_id: null,
  };
  await insertJob(tx, job);
  const total = await insertItems(tx, job.id, importedLeads(tx, imp.id));
  await tx
    .updateTable('injection_jobs')
    .set(total ? { total } : { total, state: 'done', finished_at: now })
    .where('id', '=', job.id)
    .execute();
  await audit(tx, SYSTEM, {
    action: 'injection.created',
    target_type: 'injection',
    target_id: job.id,
    details: { selection: { import_id: imp.id }, leads: total, ...imp.route },
  });
  return job.id;
}
