import { shownReviewRule } from '../quality/review-rule.js';
import { partnerIdInScope } from '../../db/record-scope.js';
import type { DataScope } from '../../db/scope.js';
import type { Insertable, Kysely, Updateable } from 'kysely';
import { isPostgres } from '../../db/database.js';
import { newId } from '../../db/ids.js';
import { containsText } from '../../db/like.js';
import type { Database, FlowsTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import type { FlowTargetInputT } from './schemas.js';

export const flowColumns = [
  'id',
  'name',
  'status',
  'max_attempts',
  'review_rule',
  'created_at',
  'updated_at',
  'archived_at',
] as const;

const targetColumns = [
  'flow_targets.id',
  'flow_targets.flow_id',
  'flow_targets.partner_id',
  'partners.name as partner_name',
  'flow_targets.position',
  'flow_targets.priority',
  'flow_targets.weight',
  'flow_targets.daily_cap',
  'flow_targets.hourly_cap',
  'flow_targets.total_cap',
  'flow_targets.country_caps',
  'flow_targets.cap_counts',
  'flow_targets.countries',
  'flow_targets.schedule',
] as const;

/**
 * One flow. `lock` (inside a transaction) holds the row until commit on PostgreSQL, so two
 * writers of the same flow, or a writer and a campaign pointing at it, take turns; SQLite
 * serializes write transactions already.
 */
export async function findFlowRow(db: Kysely<Database>, id: string, lock = false) {
  let q = db.selectFrom('flows').select(flowColumns).where('id', '=', id);
  if (lock && isPostgres(db)) q = q.forUpdate();
  return q.executeTakeFirst();
}

export type FlowRow = NonNullable<Awaited<ReturnType<typeof findFlowRow>>>;

/** Targets of the given flows, each flow's in editor order. */
export function targetsOf(db: Kysely<Database>, flowIds: string[], scope: DataScope) {
  if (!flowIds.length) return Promise.resolve([]);
  let q = db
    .selectFrom('flow_targets')
    .innerJoin('partners', 'partners.id', 'flow_targets.partner_id')
    .select(targetColumns)
    .where('flow_targets.flow_id', 'in', flowIds);
  // A reader limited to some partners sees only their targets of a flow.
  const inScope = partnerIdInScope(scope, 'flow_targets.partner_id');
  if (inScope) q = q.where(inScope);
  return q.orderBy('flow_targets.flow_id').orderBy('flow_targets.position').execute();
}

export type TargetRow = Awaited<ReturnType<typeof targetsOf>>[number];

export const toTarget = (t: TargetRow) => ({
  id: t.id,
  partner_id: t.partner_id,
  partner_name: t.partner_name,
  priority: t.priority,
  weight: t.weight,
  daily_cap: t.daily_cap,
  hourly_cap: t.hourly_cap,
  total_cap: t.total_cap,
  country_caps: JSON.parse(t.country_caps) as Record<string, number>,
  cap_counts: t.cap_counts,
  countries: JSON.parse(t.countries) as string[],
  schedule: t.schedule === null ? null : JSON.parse(t.schedule),
});

/** Flows in the API shape, with their targets (one query for all of them). */
export async function withTargets(db: Kysely<Database>, rows: FlowRow[], scope: DataScope) {
  const targets = await targetsOf(
    db,
    rows.map((r) => r.id),
    scope,
  );
  const byFlow = new Map<string, TargetRow[]>();
  for (const t of targets) byFlow.set(t.flow_id, [...(byFlow.get(t.flow_id) ?? []), t]);
  return rows.map(({ review_rule, ...r }) => ({
    ...r,
    max_attempts: Number(r.max_attempts),
    review: shownReviewRule(review_rule),
    targets: (byFlow.get(r.id) ?? []).map(toTarget),
  }));
}

export async function findFlow(db: Kysely<Database>, id: string, scope: DataScope) {
  const row = await findFlowRow(db, id);
  return row ? (await withTargets(db, [row], scope))[0] : undefined;
}

export interface FlowFilter {
  limit: number;
  cursor?: string;
  status?: 'active' | 'paused';
  q?: string;
  include_archived: boolean;
  partner_id?: string;
}

/** One page of flows, oldest first, each with its targets. */
export async function flowPage(db: Kysely<Database>, f: FlowFilter, scope: DataScope) {
  const after = decodeCursor(f.cursor, ['id']);
  let query = db
    .selectFrom('flows')
    .select(flowColumns)
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) query = query.where('id', '>', after.id);
  if (!f.include_archived) query = query.where('archived_at', 'is', null);
  if (f.status) query = query.where('status', '=', f.status);
  if (f.q) query = query.where((eb) => containsText(eb.ref('name'), f.q!));
  if (f.partner_id) {
    const partnerId = f.partner_id;
    query = query.where('id', 'in', (eb) =>
      eb.selectFrom('flow_targets').select('flow_id').where('partner_id', '=', partnerId),
    );
  }
  const page = pageOf(await query.execute(), f.limit, (r) => ({ id: r.id }));
  return { ...page, data: await withTargets(db, page.data, scope) };
}

export const insertFlow = (db: Kysely<Database>, row: Insertable<FlowsTable>) =>
  db.insertInto('flows').values(row).execute();

export const patchFlow = (db: Kysely<Database>, id: string, patch: Updateable<FlowsTable>) =>
  db.updateTable('flows').set(patch).where('id', '=', id).execute();

export const deleteTargets = (db: Kysely<Database>, flowId: string) =>
  db.deleteFrom('flow_targets').where('flow_id', '=', flowId).execute();

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
  await deleteTargets(db, flowId);
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

/** Partners by id, with what a reference check needs; shared-locked on PostgreSQL until commit. */
export async function partnersById(db: Kysely<Database>, ids: string[]) {
  if (!ids.length) return new Map<string, { id: string; archived_at: string | null }>();
  let q = db.selectFrom('partners').select(['id', 'archived_at']).where('id', 'in', ids);
  if (isPostgres(db)) q = q.forShare();
  return new Map((await q.execute()).map((p) => [p.id, p]));
}

/** Non-archived campaigns that route through the flow (for the in-use answer). */
export const liveCampaignsOf = (db: Kysely<Database>, flowId: string) =>
  db
    .selectFrom('campaigns')
    .select(['id', 'name'])
    .where('flow_id', '=', flowId)
    .where('archived_at', 'is', null)
    .orderBy('id')
    .limit(11)
    .execute();

/** Whether any lead or archived campaign still refers to the flow (then it is archived, not deleted). */
export async function flowIsReferenced(db: Kysely<Database>, flowId: string) {
  const lead = await db.selectFrom('leads').select('id').where('flow_id', '=', flowId).limit(1).executeTakeFirst();
  if (lead) return true;
  const campaign = await db
    .selectFrom('campaigns')
    .select('id')
    .where('flow_id', '=', flowId)
    .limit(1)
    .executeTakeFirst();
  return !!campaign;
}
