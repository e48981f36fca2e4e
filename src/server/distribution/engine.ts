import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import { isPostgres, PREPARED } from '../db/database.js';
import { compiledOnce } from '../db/compiled.js';
import { fromJson, jsonArrayFrom, jsonObjectFrom } from '../db/json.js';
import { newId, nowIso } from '../db/ids.js';
import { writeTransaction } from '../db/write-batch.js';
import type { Database, PartnersTable } from '../db/tables.js';
import type { StoredIntegration } from '../modules/partners/schemas.js';
import { capSlots, firstFull, readUsage, release, reserve, type CapSlot } from './caps.js';
import { refusal, type Schedule } from './eligibility.js';
import { tryOrder } from './order.js';
import type { LeadForPartner, PartnerCall } from './partner-client.js';
import type { DeliveryDeps, DeliveryOutcome } from './runner.js';

// The routing engine: one pending lead → a partner, or a reason why none took it.
//
// Ownership: the caller owns the pending lead through leads.lease_until. Every write this engine
// makes to the lead is conditional on the lease still holding the value it last saw (a fencing
// token), so if the recovery sweep ever claims the lead (lease run out), this delivery stops
// instead of racing it. The lease is pushed past each partner call's timeout before the call.
//
// Transactions stay short and never span a partner call: one to reserve caps and record the
// attempt as in_flight, the call, one to record the answer (and deliver, or give the caps back).

export interface RouteOverride {
  /** Route through this flow instead of the lead's own (redeliver). */
  flowId?: string;
  /** Offer the lead to this one partner only (redeliver). */
  partnerId?: string;
  /** Resuming after a crash: skip partners this lead was already offered to. */
  resume?: boolean;
}

const EXCERPT_CHARS = 2000;
/** Lease beyond a partner call's timeout: time to record its answer. */
const LEASE_MARGIN_MS = 5000;

const LEAD_COLUMNS = [
  'leads.id', 'leads.first_name', 'leads.last_name', 'leads.email', 'leads.phone', 'leads.country', 'leads.ip',
  'leads.language', 'leads.funnel', 'leads.sub_id1', 'leads.sub_id2', 'leads.sub_id3', 'leads.sub_id4', 'leads.sub_id5',
  'leads.status', 'leads.reason', 'leads.autologin_url', 'leads.campaign_id', 'leads.flow_id', 'leads.lease_until',
] as const;

type Db = Kysely<Database>;
type LeadRow = NonNullable<Awaited<ReturnType<typeof loadLead>>>;

interface Candidate {
  name: string;
  priority: number;
  weight: number;
  partner: { id: string; status: 'active' | 'paused'; archived_at: string | null; countries: string[]; working_hours: Schedule | null; daily_cap: number | null; total_cap: number | null };
  target: { id: string; daily_cap: number | null; countries: string[]; schedule: Schedule | null } | null;
  integration: StoredIntegration;
  slots: CapSlot[];
}

interface Route {
  /** The flow used (null: one partner chosen directly). */
  flowId: string | null;
  maxAttempts: number;
  /** In the flow's order. */
  candidates: Candidate[];
}

/**
 * The lead with what routing needs, in one statement (this is the hot path): its campaign, its
 * last attempt number, and the flow it goes through (`flowOverride`, else the lead's own, else
 * its campaign's) with that flow's targets and their partners, as JSON (db/json.ts).
 */
const loadLead = (db: Db, id: string, flowOverride: string | null = null) => leadForRouting(db, id, flowOverride).then((rows) => rows[0]);

const leadForRouting = compiledOnce((db: Db, id: string, flowOverride: string | null) => {
  const routeFlow = sql<string | null>`coalesce(${flowOverride}, ${sql.ref('leads.flow_id')}, ${sql.ref('campaigns.flow_id')})`;
  return db
    .selectFrom('leads')
    .leftJoin('campaigns', 'campaigns.id', 'leads.campaign_id')
    .select(LEAD_COLUMNS)
    .select(['campaigns.name as campaign_name', 'campaigns.flow_id as campaign_flow_id', 'campaigns.payout'])
    .select((eb) => [
      eb.selectFrom('lead_attempts').select((a) => a.fn.max('lead_attempts.attempt_no').as('n')).whereRef('lead_attempts.lead_id', '=', 'leads.id').as('last_attempt'),
      jsonObjectFrom(db, eb.selectFrom('flows').select(['flows.name', 'flows.status', 'flows.max_attempts', 'flows.archived_at']).where('flows.id', '=', routeFlow)).as('flow'),
      jsonArrayFrom(
        db,
        eb
          .selectFrom('flow_targets as t')
          .innerJoin('partners', 'partners.id', 't.partner_id')
          .select(PARTNER_COLUMNS)
          .select(['t.id as target_id', 't.position', 't.priority', 't.weight', 't.daily_cap as target_daily_cap', 't.countries as target_countries', 't.schedule'])
          .where('t.flow_id', '=', routeFlow),
      ).as('targets'),
    ])
    .where('leads.id', '=', id)
    .modifyEnd(sql.raw(PREPARED));
});

const outcomeOf = (l: { status: DeliveryOutcome['status']; autologin_url: string | null; reason: string | null }): DeliveryOutcome => ({
  status: l.status,
  autologin_url: l.autologin_url,
  reason: l.reason,
});

/** The lead's state now: what a delivery that lost its lease answers. */
async function current(db: Db, id: string): Promise<DeliveryOutcome> {
  return outcomeOf((await loadLead(db, id))!);
}

const PARTNER_COLUMNS = [
  'partners.id', 'partners.name', 'partners.status', 'partners.archived_at', 'partners.countries',
  'partners.working_hours', 'partners.daily_cap', 'partners.total_cap', 'partners.integration',
] as const;

type PartnerRow = Pick<Selectable<PartnersTable>, 'id' | 'name' | 'status' | 'archived_at' | 'countries' | 'working_hours' | 'daily_cap' | 'total_cap' | 'integration'>;

function candidate(p: PartnerRow, t: { id: string; priority: number; weight: number; daily_cap: number | null; countries: string; schedule: string | null } | null): Candidate {
  return {
    name: p.name,
    priority: t?.priority ?? 1,
    weight: t?.weight ?? 1,
    partner: {
      id: p.id,
      status: p.status,
      archived_at: p.archived_at,
      countries: JSON.parse(p.countries),
      working_hours: p.working_hours ? JSON.parse(p.working_hours) : null,
      daily_cap: p.daily_cap,
      total_cap: p.total_cap,
    },
    target: t && { id: t.id, daily_cap: t.daily_cap, countries: JSON.parse(t.countries), schedule: t.schedule ? JSON.parse(t.schedule) : null },
    integration: JSON.parse(p.integration),
    slots: [],
  };
}

/** The flow (or partner) to route through, or why the lead cannot be routed at all. */
async function resolveRoute(db: Db, lead: LeadRow, override: RouteOverride): Promise<Route | string> {
  if (override.partnerId) {
    const p = await db.selectFrom('partners').select(PARTNER_COLUMNS).where('id', '=', override.partnerId).executeTakeFirst();
    if (!p) return `Partner ${override.partnerId} does not exist`;
    return { flowId: null, maxAttempts: 1, candidates: [candidate(p, null)] };
  }
  const flowId = override.flowId ?? lead.flow_id ?? lead.campaign_flow_id;
  if (!flowId) return lead.campaign_name === null ? 'The lead has no campaign and no flow' : `Campaign ${lead.campaign_name} has no flow`;
  // Read with the lead (loadLead), for this very flow.
  const flow = fromJson(lead.flow);
  if (!flow) return `Flow ${flowId} does not exist`;
  if (flow.archived_at) return `Flow ${flow.name} is deleted`;
  if (flow.status !== 'active') return `Flow ${flow.name} is paused`;
  const targets = fromJson(lead.targets).sort((a, b) => a.position - b.position);
  const candidates = targets.map((r) =>
    candidate(r, { id: r.target_id, priority: r.priority, weight: r.weight, daily_cap: r.target_daily_cap, countries: r.target_countries, schedule: r.schedule }),
  );
  return { flowId, maxAttempts: Number(flow.max_attempts), candidates };
}

/** The lead row, still pending and still ours (the lease is the fencing token). */
const owned = (leadId: string, lease: string | null) => (eb: ExpressionBuilder<Database, 'leads'>) =>
  eb.and([eb('id', '=', leadId), eb('status', '=', 'pending'), lease === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', lease)]);

class LeaseLost extends Error {}

type Started = { kind: 'started'; attemptId: string; lease: string } | { kind: 'full'; slot: CapSlot } | { kind: 'lost' };

/** One transaction: the caps, the attempt as in_flight, the lease past the call's timeout. */
async function startAttempt(db: Db, lead: LeadRow, c: Candidate, attemptNo: number, lease: string | null, newFlowId: string | null): Promise<Started> {
  const needed = Date.now() + c.integration.timeout_ms + LEASE_MARGIN_MS;
  // A lease that still runs past this call's deadline needs no push, and proves ownership by
  // itself: the sweep only takes leads whose lease has run out. (Intake's first lease usually
  // covers the first call: one write less per lead.)
  const covered = lease !== null && !newFlowId && Date.parse(lease) > needed;
  const inFlight = () => ({
    id: newId(), lead_id: lead.id, partner_id: c.partner.id, attempt_no: attemptNo, requested_at: nowIso(),
    duration_ms: null, http_status: null, outcome: 'in_flight' as const, reason: null, response_excerpt: null,
  });
  // PostgreSQL, no cap to reserve and nothing to push: the insert alone, one round trip instead
  // of three (SQLite shares its commits between leads instead: write-batch.ts).
  if (covered && !c.slots.length && isPostgres(db)) {
    const attempt = inFlight();
    await db.insertInto('lead_attempts').values(attempt).execute();
    return { kind: 'started', attemptId: attempt.id, lease: lease! };
  }
  try {
    return await writeTransaction(db, async (trx): Promise<Started> => {
      const full = await reserve(trx, c.slots);
      if (full) return { kind: 'full', slot: full };
      const attempt = inFlight();
      await trx.insertInto('lead_attempts').values(attempt).execute();
      const attemptId = attempt.id;
      if (covered) return { kind: 'started', attemptId, lease: lease! };
      const next = new Date(needed).toISOString();
      // flow_id is set before the first call, so a resumed delivery keeps the flow it began with.
      const res = await trx
        .updateTable('leads')
        .set({ lease_until: next, ...(newFlowId ? { flow_id: newFlowId } : {}) })
        .where(owned(lead.id, lease))
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) throw new LeaseLost();
      return { kind: 'started', attemptId, lease: next };
    });
  } catch (err) {
    if (err instanceof LeaseLost) return { kind: 'lost' };
    throw err;
  }
}

function leadForPartner(l: LeadRow): LeadForPartner {
  const { id, first_name, last_name, email, phone, country, ip, language, funnel, sub_id1, sub_id2, sub_id3, sub_id4, sub_id5 } = l;
  return { id, first_name, last_name, email, phone, country, ip, language, funnel, sub_id1, sub_id2, sub_id3, sub_id4, sub_id5 };
}

const attemptAnswer = (call: PartnerCall) => ({
  duration_ms: Math.round(call.duration_ms),
  http_status: call.response?.status ?? null,
  outcome: call.outcome,
  reason: call.reason,
  response_excerpt: call.response ? call.response.body.slice(0, EXCERPT_CHARS) : null,
});

function deliveredLead(c: Candidate, call: PartnerCall, costCents: number | null) {
  const now = nowIso();
  return {
    status: 'delivered' as const,
    partner_id: c.partner.id,
    partner_lead_id: call.partner_lead_id,
    autologin_url: call.autologin_url,
    delivered_at: now,
    status_updated_at: now,
    reason: null,
    lease_until: null,
    ...(costCents === null ? {} : { cost_cents: costCents }),
  };
}

/**
 * The partner's answer on the attempt; accepted → the lead delivered; else the caps given back;
 * all or nothing. false when the lead is no longer ours (the sweep took it over meanwhile).
 */
async function finishAttempt(db: Db, lead: LeadRow, c: Candidate, attemptId: string, lease: string, call: PartnerCall, costCents: number | null): Promise<boolean> {
  if (isPostgres(db)) return finishInOneStatement(db, lead, c, attemptId, lease, call, costCents);
  return writeTransaction(db, async (trx) => {
    const attempt = await trx.updateTable('lead_attempts').set(attemptAnswer(call)).where('id', '=', attemptId).where('outcome', '=', 'in_flight').executeTakeFirst();
    if (Number(attempt.numUpdatedRows) === 0) return false;
    if (call.outcome !== 'accepted') {
      await release(trx, c.slots);
      return true;
    }
    const res = await trx.updateTable('leads').set(deliveredLead(c, call, costCents)).where(owned(lead.id, lease)).executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  });
}

/**
 * finishAttempt on PostgreSQL: one statement, so one round trip instead of four (begin, two
 * updates, commit), atomic as a statement is. The lead and the caps change only where the
 * attempt did (`exists (select from a)`), as in the transaction SQLite runs (there statements
 * are cheap and commits are shared: write-batch.ts).
 */
async function finishInOneStatement(db: Db, lead: LeadRow, c: Candidate, attemptId: string, lease: string, call: PartnerCall, costCents: number | null): Promise<boolean> {
  const accepted = call.outcome === 'accepted';
  const q = db
    .with('a', (d) => d.updateTable('lead_attempts').set(attemptAnswer(call)).where('id', '=', attemptId).where('outcome', '=', 'in_flight').returning('lead_attempts.id'))
    .with('l', (d) =>
      d
        .updateTable('leads')
        .set(deliveredLead(c, call, costCents))
        .where(owned(lead.id, lease))
        .where((eb) => eb.and([eb.val(accepted), eb.exists(eb.selectFrom('a').select('a.id'))]))
        .returning('leads.id'),
    )
    .with('r', (d) =>
      d
        .updateTable('cap_counters')
        .set({ used: sql`used - 1` })
        .where((eb) =>
          eb.and([
            eb.val(!accepted && c.slots.length > 0),
            eb.or(c.slots.length ? c.slots.map((s) => eb.and([eb('scope', '=', s.scope), eb('period', '=', s.period)])) : [eb.val(false)]),
            eb('used', '>', 0),
            eb.exists(eb.selectFrom('a').select('a.id')),
          ]),
        )
        .returning('cap_counters.scope'),
    )
    .selectNoFrom((eb) => [
      eb.selectFrom('a').select((e) => e.fn.countAll<string>().as('n')).as('attempt'),
      eb.selectFrom('l').select((e) => e.fn.countAll<string>().as('n')).as('lead'),
      eb.selectFrom('r').select((e) => e.fn.countAll<string>().as('n')).as('released'),
    ]);
  const row = await q.executeTakeFirstOrThrow();
  if (Number(row.attempt) === 0) return false;
  return accepted ? Number(row.lead) > 0 : true;
}

function rejectionReason(tried: string[], skipped: string[], notTried: number, maxAttempts: number): string {
  if (!tried.length && !notTried) return `No eligible partner: ${skipped.length ? skipped.join(', ') : 'the flow has no partners'}`;
  const parts: string[] = [];
  if (tried.length) parts.push(`Every partner tried declined: ${tried.join(', ')}`);
  if (notTried) parts.push(`${notTried} more not tried (at most ${maxAttempts} attempt${maxAttempts === 1 ? '' : 's'} per lead)`);
  if (skipped.length) parts.push(`not eligible: ${skipped.join(', ')}`);
  return parts.join('; ');
}

/** The lead `rejected` with `reason`, if still ours. */
async function reject(db: Db, lead: LeadRow, lease: string | null, reason: string, flowId: string | null): Promise<DeliveryOutcome> {
  const now = nowIso();
  const res = await writeTransaction(db, (trx) =>
    trx
      .updateTable('leads')
      .set({ status: 'rejected', reason, status_updated_at: now, lease_until: null, ...(flowId ? { flow_id: flowId } : {}) })
      .where(owned(lead.id, lease))
      .executeTakeFirst(),
  );
  return Number(res.numUpdatedRows) ? { status: 'rejected', autologin_url: null, reason } : current(db, lead.id);
}

/**
 * Delivers a `pending` lead its caller owns: route, eligibility, caps, waterfall (see the
 * brief of issue 4). Partner problems are outcomes, never exceptions; a database error throws
 * and leaves the lease to run out, and the recovery sweep takes the lead from there.
 */
export async function deliverLead(deps: DeliveryDeps, leadId: string, override: RouteOverride = {}): Promise<DeliveryOutcome> {
  const { db } = deps;
  const lead = await loadLead(db, leadId, override.flowId ?? null);
  if (!lead) throw new Error(`deliverLead: no lead ${leadId}`);
  if (lead.status !== 'pending') return outcomeOf(lead);
  let lease = lead.lease_until;

  const route = await resolveRoute(db, lead, override);
  if (typeof route === 'string') return reject(db, lead, lease, route, null);
  const payout = lead.payout === null ? null : (JSON.parse(lead.payout) as { model: 'cpl' | 'cpa'; amount_cents: number });
  const costCents = payout?.model === 'cpl' ? payout.amount_cents : null;

  let attemptNo = Number(lead.last_attempt ?? 0);
  // A resumed delivery continues the interrupted one: partners offered are skipped, and their
  // calls count toward max_attempts.
  const prior = override.resume ? await db.selectFrom('lead_attempts').select('partner_id').where('lead_id', '=', lead.id).execute() : [];
  const offered = new Set(prior.map((a) => a.partner_id));
  let calls = prior.length;

  const now = Date.now();
  const skipped: string[] = [];
  const eligible: Candidate[] = [];
  for (const c of route.candidates) {
    const why = offered.has(c.partner.id) ? 'already offered before an interruption' : refusal(c, lead.country, now);
    if (why) {
      skipped.push(`${c.name} (${why})`);
      continue;
    }
    c.slots = capSlots(c, now);
    eligible.push(c);
  }
  const usage = await readUsage(db, eligible.flatMap((c) => c.slots));
  const open = eligible.filter((c) => {
    const full = firstFull(c.slots, usage);
    if (full) skipped.push(`${c.name} (${full.full})`);
    return !full;
  });

  const tried: string[] = [];
  let notTried = 0;
  for (const c of tryOrder(open)) {
    if (calls >= route.maxAttempts) {
      notTried++;
      continue;
    }
    // Only a change of flow_id is written: an update of it touches the analytics rollup rows.
    const newFlowId = route.flowId !== null && route.flowId !== lead.flow_id ? route.flowId : null;
    const started = await startAttempt(db, lead, c, attemptNo + 1, lease, newFlowId);
    if (started.kind === 'lost') return current(db, lead.id);
    if (started.kind === 'full') {
      // Filled up by concurrent leads since the read above: skipped, not an attempt.
      skipped.push(`${c.name} (${started.slot.full})`);
      continue;
    }
    attemptNo++;
    calls++;
    lease = started.lease;
    lead.flow_id = route.flowId ?? lead.flow_id;
    const call = await deps.client.call(c.integration, leadForPartner(lead));
    deps.onPartnerCall?.({ id: c.partner.id, name: c.name }, call);
    if (!(await finishAttempt(db, lead, c, started.attemptId, lease, call, costCents))) {
      deps.log.warn({ leadId: lead.id }, 'delivery taken over by the recovery sweep; stopping');
      return current(db, lead.id);
    }
    if (call.outcome === 'accepted') return { status: 'delivered', autologin_url: call.autologin_url, reason: null };
    tried.push(`${c.name} (${call.reason ?? call.outcome})`);
  }
  return reject(db, lead, lease, rejectionReason(tried, skipped, notTried, route.maxAttempts), route.flowId !== lead.flow_id ? route.flowId : null);
}
