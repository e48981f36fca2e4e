import { storedReviewRule } from '../quality/review-rule.js';
import { UNSCOPED, type DataScope } from '../../db/scope.js';
import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { archiveOrDelete } from '../../db/archive.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { countryProblem } from '../../http/countries.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import { isTimezone } from '../operators/service.js';
import {
  deleteTargets,
  findFlow,
  findFlowRow,
  flowIsReferenced,
  flowPage,
  insertFlow,
  liveCampaignsOf,
  partnersById,
  patchFlow,
  replaceTargets,
  targetsOf,
  toTarget,
  withTargets,
  type FlowFilter,
  type TargetRow,
} from './queries.js';
import type { CreateFlow, FlowTargetInputT, UpdateFlow } from './schemas.js';

export const listFlows = (db: Kysely<Database>, filter: FlowFilter, scope: DataScope) => flowPage(db, filter, scope);

export const getFlow = async (db: Kysely<Database>, id: string, scope: DataScope) =>
  (await findFlow(db, id, scope)) ?? notFound('flow');

export async function createFlow(db: Kysely<Database>, actor: Actor, b: Static<typeof CreateFlow>) {
  const targets = b.targets ?? [];
  const now = nowIso();
  const id = newId();
  return db.transaction().execute(async (tx) => {
    await checkTargets(tx, targets);
    const row = {
      id,
      name: b.name.trim(),
      status: b.status ?? 'active',
      max_attempts: b.max_attempts ?? 3,
      review_rule: storedReviewRule(b.review ?? {}),
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    await insertFlow(tx, row);
    await replaceTargets(tx, id, targets);
    await audit(tx, actor, {
      action: 'flow.created',
      target_type: 'flow',
      target_id: id,
      details: {
        name: row.name,
        status: row.status,
        max_attempts: row.max_attempts,
        review: JSON.parse(row.review_rule),
        targets: targetSummary(targets),
      },
    });
    return (await withTargets(tx, [row], UNSCOPED))[0];
  });
}

export async function updateFlow(db: Kysely<Database>, actor: Actor, id: string, b: Static<typeof UpdateFlow>) {
  return db.transaction().execute(async (tx) => {
    const flow = (await findFlowRow(tx, id, true)) ?? notFound('flow');
    if (flow.archived_at) conflict('This flow is archived; archived flows cannot be changed.');
    const before = (await withTargets(tx, [flow], UNSCOPED))[0];
    if (b.targets) {
      await checkTargets(tx, b.targets, new Set(before.targets.map((t) => t.partner_id)));
      await replaceTargets(tx, flow.id, b.targets);
    }
    const patch = {
      ...(b.name !== undefined ? { name: b.name.trim() } : {}),
      ...(b.status !== undefined ? { status: b.status } : {}),
      ...(b.max_attempts !== undefined ? { max_attempts: b.max_attempts } : {}),
      ...(b.review ? { review_rule: storedReviewRule(b.review) } : {}),
      updated_at: nowIso(),
    };
    await patchFlow(tx, flow.id, patch);
    const changed = (k: 'name' | 'status' | 'max_attempts' | 'review') =>
      b[k] !== undefined ? { [k]: before[k] } : {};
    await audit(tx, actor, {
      action: 'flow.updated',
      target_type: 'flow',
      target_id: flow.id,
      details: {
        name: flow.name,
        before: {
          ...changed('name'),
          ...changed('status'),
          ...changed('max_attempts'),
          ...changed('review'),
          ...(b.targets ? { targets: targetSummary(before.targets) } : {}),
        },
        after: { ...b, ...(b.targets ? { targets: targetSummary(b.targets) } : {}) },
      },
    });
    return (await findFlow(tx, flow.id, UNSCOPED))!;
  });
}

/**
 * Refused (409) while a campaign that is not archived routes through it; archived while leads
 * or archived campaigns refer to it (an archived one stays as it is); else deleted with its targets.
 */
export async function deleteFlow(db: Kysely<Database>, actor: Actor, id: string) {
  await db.transaction().execute(async (tx) => {
    let targets: TargetRow[] = [];
    const done =
      (await archiveOrDelete(tx, 'flows', id, {
        find: () => findFlowRow(tx, id),
        refuse: async (flow) => {
          const campaigns = await liveCampaignsOf(tx, flow.id);
          if (campaigns.length) {
            const names = campaigns.slice(0, 10).map((c) => `"${c.name}" (${c.id})`);
            conflict(
              `Campaigns still route through this flow: ${names.join(', ')}${campaigns.length > 10 ? ', …' : ''}. Give them another flow first.`,
            );
          }
        },
        referenced: (flow) => flowIsReferenced(tx, flow.id),
        touch: true,
        beforeDelete: async (flow) => {
          targets = await targetsOf(tx, [flow.id], UNSCOPED);
          await deleteTargets(tx, flow.id);
        },
      })) ?? notFound('flow');
    const flow = done.row;
    if (done.outcome === 'archived') {
      await audit(tx, actor, {
        action: 'flow.archived',
        target_type: 'flow',
        target_id: flow.id,
        details: { name: flow.name, reason: 'leads or archived campaigns refer to it' },
      });
    } else if (done.outcome === 'deleted') {
      await audit(tx, actor, {
        action: 'flow.deleted',
        target_type: 'flow',
        target_id: flow.id,
        details: { name: flow.name, targets: targetSummary(targets.map(toTarget)) },
      });
    }
  });
}

/**
 * The checks the schema cannot make, all reported at once: each schedule's time zone, a
 * partner repeated in the list, and partners that do not exist or are archived. A partner the
 * flow already routes to stays allowed as it is (archiving is refused only as a new reference).
 */
export async function checkTargets(
  db: Kysely<Database>,
  targets: FlowTargetInputT[],
  current: Set<string> = new Set(),
) {
  const errors = await targetErrors(db, targets, current);
  if (errors.length) invalid(errors);
}

/**
 * The same checks as errors, on targets that may not have passed their schema (route config
 * moreChecks): a target or schedule of the wrong shape is skipped, the schema names it.
 */
export async function targetErrors(
  db: Kysely<Database>,
  targets: unknown,
  current: Set<string> = new Set(),
): Promise<FieldError[]> {
  const errors: FieldError[] = [];
  if (!Array.isArray(targets)) return errors;
  const seen = new Map<string, number>();
  const partnerOf = (t: unknown) =>
    t !== null && typeof t === 'object' && typeof (t as { partner_id?: unknown }).partner_id === 'string'
      ? (t as { partner_id: string }).partner_id
      : null;
  targets.forEach((t, i) => {
    const tz = (t as { schedule?: { timezone?: unknown } } | null)?.schedule?.timezone;
    if (typeof tz === 'string' && !isTimezone(tz)) {
      errors.push({
        field: `targets[${i}].schedule.timezone`,
        message: `"${tz}" is not an IANA time zone (e.g. Europe/Berlin)`,
      });
    }
    if (t !== null && typeof t === 'object') capErrors(t as Record<string, unknown>, `targets[${i}]`, errors);
    const id = partnerOf(t);
    if (id === null) return;
    const first = seen.get(id);
    if (first !== undefined)
      errors.push({
        field: `targets[${i}].partner_id`,
        message: `repeats the partner of targets[${first}]; a partner appears once per flow`,
      });
    else seen.set(id, i);
  });
  const partners = await partnersById(db, [...seen.keys()]);
  targets.forEach((t, i) => {
    const id = partnerOf(t);
    if (id === null || seen.get(id) !== i) return;
    const p = partners.get(id);
    if (!p) errors.push({ field: `targets[${i}].partner_id`, message: 'no partner with that id' });
    else if (p.archived_at && !current.has(p.id))
      errors.push({ field: `targets[${i}].partner_id`, message: 'the partner is archived' });
  });
  return errors;
}

const intOrNull = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : null);

/** A target's caps, checked together: each country cap's country, and caps that contradict each other. */
function capErrors(t: Record<string, unknown>, at: string, errors: FieldError[]) {
  const daily = intOrNull(t.daily_cap);
  const hourly = intOrNull(t.hourly_cap);
  const total = intOrNull(t.total_cap);
  if (daily !== null && hourly !== null && hourly > daily)
    errors.push({ field: `${at}.hourly_cap`, message: `must be at most the daily cap (${daily})` });
  if (daily !== null && total !== null && total < daily)
    errors.push({ field: `${at}.total_cap`, message: `must be at least the daily cap (${daily})` });
  const countries = Array.isArray(t.countries) ? t.countries : [];
  const caps = t.country_caps;
  if (caps === null || typeof caps !== 'object' || Array.isArray(caps)) return;
  for (const code of Object.keys(caps)) {
    if (!/^[A-Z]{2}$/.test(code)) continue; // the schema names it
    const problem = countryProblem(code);
    if (problem) errors.push({ field: `${at}.country_caps.${code}`, message: problem });
    else if (countries.length && !countries.includes(code)) {
      errors.push({
        field: `${at}.country_caps.${code}`,
        message: `this target does not take ${code} (it is not in its countries)`,
      });
    }
  }
}

/** What the audit log keeps of a target list: enough to see who got which share, within which caps. */
export const targetSummary = (
  targets: Pick<
    FlowTargetInputT,
    'partner_id' | 'priority' | 'weight' | 'daily_cap' | 'hourly_cap' | 'total_cap' | 'country_caps' | 'cap_counts'
  >[],
) =>
  targets.map((t) => ({
    partner_id: t.partner_id,
    priority: t.priority,
    weight: t.weight ?? 100,
    daily_cap: t.daily_cap ?? null,
    hourly_cap: t.hourly_cap ?? null,
    total_cap: t.total_cap ?? null,
    country_caps: t.country_caps ?? {},
    cap_counts: t.cap_counts ?? 'deliveries',
  }));

/** The partners a flow routes to now (none for a flow that does not exist). */
export async function currentPartners(db: Kysely<Database>, flowId: string): Promise<Set<string>> {
  return new Set((await targetsOf(db, [flowId], UNSCOPED)).map((t) => t.partner_id));
}
