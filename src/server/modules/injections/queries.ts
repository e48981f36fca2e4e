import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Database, InjectionItemState, InjectionJobsTable, InjectionState } from '../../db/tables.js';

type DB = Kysely<Database>;

export type JobRow = Selectable<InjectionJobsTable>;

export interface Counts {
  total: number;
  sent: number;
  delivered: number;
  refused: number;
  skipped: number;
  left: number;
}

export const insertJob = (db: DB, job: JobRow) => db.insertInto('injection_jobs').values(job).execute();

/** The job's leads, chosen once: one INSERT … SELECT from the leads a filter or an id list selects, but erased ones. */
export async function insertItems(
  db: DB,
  jobId: string,
  leads: SelectQueryBuilder<Database, 'leads', { id: string }>,
): Promise<number> {
  await db
    .insertInto('injection_items')
    .columns(['job_id', 'lead_id', 'state'])
    .expression(
      leads
        // A lead whose contacts were erased (an erasure, the retention) has nothing a partner can take.
        .where('leads.erased_at', 'is', null)
        .clearSelect()
        .select([sql<string>`cast(${jobId} as text)`.as('job_id'), 'leads.id', sql<string>`'pending'`.as('state')]),
    )
    .execute();
  const row = await db
    .selectFrom('injection_items')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('job_id', '=', jobId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A CSV import's leads (modules/imports, mode route), as insertItems takes a selection. */
export const importedLeads = (db: DB, importId: string) =>
  db.selectFrom('leads').select('leads.id').where('leads.import_id', '=', importId).where('leads.status', '=', 'new');

export const jobById = (db: DB, id: string) =>
  db.selectFrom('injection_jobs').selectAll().where('id', '=', id).executeTakeFirst();

/** Newest first, after the cursor; `createdBy` narrows to one operator's jobs (a scoped role). */
export function listJobs(db: DB, after: { c: string; id: string } | null, limit: number, createdBy: string | null) {
  let q = db.selectFrom('injection_jobs').selectAll();
  if (createdBy !== null) q = q.where('created_by', '=', createdBy);
  if (after) q = q.where((eb) => eb(eb.refTuple('created_at', 'id'), '<', eb.tuple(after.c, after.id)));
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Each job's items by state. */
export async function countsOf(db: DB, jobIds: string[]): Promise<Map<string, Counts>> {
  const out = new Map<string, Counts>();
  for (const id of jobIds) out.set(id, { total: 0, sent: 0, delivered: 0, refused: 0, skipped: 0, left: 0 });
  if (!jobIds.length) return out;
  const rows = await db
    .selectFrom('injection_items')
    .select(['job_id', 'state', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('job_id', 'in', jobIds)
    .groupBy(['job_id', 'state'])
    .execute();
  for (const r of rows) {
    const c = out.get(r.job_id)!;
    const n = Number(r.n);
    c.total += n;
    if (r.state === 'pending') c.left += n;
    else if (r.state === 'skipped') c.skipped += n;
    else {
      c.sent += n;
      if (r.state === 'delivered') c.delivered += n;
      if (r.state === 'refused') c.refused += n;
    }
  }
  return out;
}

/** Moves the job from one of `from` to `to`; false when it is in none of them. */
export async function setState(db: DB, id: string, from: InjectionState[], to: InjectionState, now: string) {
  const res = await db
    .updateTable('injection_jobs')
    .set({ state: to, updated_at: now, ...(to === 'done' || to === 'cancelled' ? { finished_at: now } : {}) })
    .where('id', '=', id)
    .where('state', 'in', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** The pace starts afresh (a resumed job saved nothing up while paused). */
export const resetBucket = (db: DB, id: string) =>
  db.updateTable('injection_jobs').set({ tokens: 0, tokens_at: null }).where('id', '=', id).execute();

/** A cancelled job's leads not sent yet: skipped. */
export const skipPending = (db: DB, jobId: string, reason: string, now: string) =>
  db
    .updateTable('injection_items')
    .set({ state: 'skipped', reason, at: now })
    .where('job_id', '=', jobId)
    .where('state', '=', 'pending')
    .execute();

/** The per-lead report: every item with its partner's name, in lead id order. */
export const reportRows = (db: DB, jobId: string) =>
  db
    .selectFrom('injection_items as i')
    .leftJoin('partners as p', 'p.id', 'i.partner_id')
    .innerJoin('leads as l', 'l.id', 'i.lead_id')
    .select([
      'i.lead_id',
      'i.state',
      'i.reason',
      'i.partner_id',
      'p.name as partner_name',
      'i.at',
      'l.email',
      'l.phone',
    ])
    .where('i.job_id', '=', jobId)
    .orderBy('i.lead_id')
    .execute();

// The worker's statements (worker.ts).

/** Jobs to work now: running, or scheduled and due. */
export const dueJobs = (db: DB, now: string) =>
  db
    .selectFrom('injection_jobs')
    .selectAll()
    .where('state', 'in', ['scheduled', 'running'])
    .where((eb) => eb.or([eb('start_at', 'is', null), eb('start_at', '<=', now)]))
    .orderBy('created_at')
    .execute();

/** The job's lease for `holder` until `until`: taken when free, run out or already held. */
export async function takeLease(db: DB, id: string, holder: string, now: string, until: string) {
  const res = await db
    .updateTable('injection_jobs')
    .set({ lease_holder: holder, lease_until: until })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now), eb('lease_holder', '=', holder)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

export const saveBucket = (db: DB, id: string, holder: string, tokens: number, at: string) =>
  db
    .updateTable('injection_jobs')
    .set({ tokens, tokens_at: at })
    .where('id', '=', id)
    .where('lease_holder', '=', holder)
    .execute();

export const pendingLeads = async (db: DB, jobId: string, limit: number) =>
  (
    await db
      .selectFrom('injection_items')
      .select('lead_id')
      .where('job_id', '=', jobId)
      .where('state', '=', 'pending')
      .orderBy('lead_id')
      .limit(limit)
      .execute()
  ).map((r) => r.lead_id);

export async function hasItemsIn(db: DB, jobId: string, states: InjectionItemState[]) {
  const row = await db
    .selectFrom('injection_items')
    .select('lead_id')
    .where('job_id', '=', jobId)
    .where('state', 'in', states)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** pending → sent, only while the job is running: false when paused, cancelled or taken by another process. */
export async function claimItem(db: DB, jobId: string, leadId: string, now: string) {
  const res = await db
    .updateTable('injection_items')
    .set({ state: 'sent', at: now })
    .where('job_id', '=', jobId)
    .where('lead_id', '=', leadId)
    .where('state', '=', 'pending')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('injection_jobs')
          .select('injection_jobs.id')
          .where('injection_jobs.id', '=', jobId)
          .where('injection_jobs.state', '=', 'running'),
      ),
    )
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/** An item's outcome, written once (only while it is `from`). */
export const settleItem = (
  db: DB,
  jobId: string,
  leadId: string,
  from: InjectionItemState,
  to: { state: InjectionItemState; reason: string | null; partner_id: string | null; at: string },
) =>
  db
    .updateTable('injection_items')
    .set(to)
    .where('job_id', '=', jobId)
    .where('lead_id', '=', leadId)
    .where('state', '=', from)
    .execute();

/** Items left `sent` whose lead has an outcome (a process died after the engine finished, or before it settled). */
export const strandedItems = (db: DB, limit: number) =>
  db
    .selectFrom('injection_items as i')
    .innerJoin('leads as l', 'l.id', 'i.lead_id')
    .select(['i.job_id', 'i.lead_id', 'l.status', 'l.reason', 'l.partner_id'])
    .where('i.state', '=', 'sent')
    .where('l.status', '<>', 'pending')
    .limit(limit)
    .execute();

/** The job a lead is being sent for now (its item `sent`), if any. */
export const jobSendingLead = (db: DB, leadId: string) =>
  db
    .selectFrom('injection_items as i')
    .innerJoin('injection_jobs as j', 'j.id', 'i.job_id')
    .select(['j.id', 'j.flow_id', 'j.partner_ids', 'j.reoffer'])
    .where('i.lead_id', '=', leadId)
    .where('i.state', '=', 'sent')
    .executeTakeFirst();

export const leadOutcome = (db: DB, id: string) =>
  db.selectFrom('leads').select(['status', 'reason', 'partner_id']).where('id', '=', id).executeTakeFirst();
