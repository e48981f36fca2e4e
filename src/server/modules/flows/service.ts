import type { Kysely } from 'kysely';
import { newId } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { countryProblem } from '../../http/countries.js';
import { invalid, type FieldError } from '../../http/errors.js';
import { isTimezone } from '../operators/service.js';
import { partnersById, targetsOf } from './queries.js';
import type { FlowTargetInputT } from './schemas.js';

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

/**
 * Replaces the flow's targets with `targets`, in order. Call inside the transaction that
 * checked them. A partner that stays in the flow keeps its target id, so the id is stable
 * across edits that only reorder or retune.
 */
export async function replaceTargets(db: Kysely<Database>, flowId: string, targets: FlowTargetInputT[]) {
  const before = await db
    .selectFrom('flow_targets')
    .select(['id', 'partner_id'])
    .where('flow_id', '=', flowId)
    .execute();
  const keep = new Map(before.map((t) => [t.partner_id, t.id]));
  await db.deleteFrom('flow_targets').where('flow_id', '=', flowId).execute();
  if (!targets.length) return;
  await db
    .insertInto('flow_targets')
    .values(
      targets.map((t, position) => ({
        id: keep.get(t.partner_id) ?? newId(),
        flow_id: flowId,
        partner_id: t.partner_id,
        position,
        priority: t.priority,
        weight: t.weight ?? 100,
        daily_cap: t.daily_cap ?? null,
        hourly_cap: t.hourly_cap ?? null,
        total_cap: t.total_cap ?? null,
        country_caps: JSON.stringify(t.country_caps ?? {}),
        cap_counts: t.cap_counts ?? 'deliveries',
        countries: JSON.stringify(t.countries ?? []),
        schedule: t.schedule ? JSON.stringify(t.schedule) : null,
      })),
    )
    .execute();
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
  return new Set((await targetsOf(db, [flowId])).map((t) => t.partner_id));
}
