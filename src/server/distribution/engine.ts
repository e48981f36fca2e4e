import { type Insertable, type Kysely } from 'kysely';
import { isPostgres } from '../db/database.js';
import { newId, nowIso } from '../db/ids.js';
import { NOT_PLACED, providerFact, recordProviderFacts } from '../db/provider-facts.js';
import { writeTransaction } from '../db/write-batch.js';
import type { Database, LeadAttemptsTable } from '../db/tables.js';
import { release, reserve, reserved, type CapSlot } from './caps.js';
import { answerAttempt, markDelivered, finishStatement, owned } from './finish-statement.js';
import { saleAtDelivery } from './prices.js';
import { callTimeoutMs } from './integrations/index.js';
import type { LeadForPartner } from './integrations/types.js';
import type { PartnerCall } from './partner-client.js';
import { loadLead, plan, type Candidate, type LeadRow, type Plan, type RouteOverride } from './route.js';
import { attemptsPerLead, capFull, rejectionReason, skip, verdictsJson, type Skip } from './skips.js';
import type { DeliveryDeps, DeliveryOutcome } from './delivery.js';

// The routing engine: one pending lead → a partner, or a reason why none took it.
//
// Ownership: the caller owns the pending lead through leads.lease_until. Every write this engine
// makes to the lead is conditional on the lease still holding the value it last saw (a fencing
// token), so if the recovery sweep ever claims the lead (lease run out), this delivery stops
// instead of racing it. The lease is pushed past each partner call's timeout before the call.
//
// Transactions stay short and never span a partner call: one to reserve caps and record the
// attempt as in_flight, the call, one to record the answer (and deliver, or give the caps back).
// A new lead's first attempt with no cap to reserve is recorded by intake, with the lead
// (firstAttempt): its delivery starts at the call.

const EXCERPT_CHARS = 2000;
/** Lease beyond a partner call's timeout: time to record its answer. */
const LEASE_MARGIN_MS = 5000;

type Db = Kysely<Database>;

const outcomeOf = (l: {
  status: DeliveryOutcome['status'];
  autologin_url: string | null;
  reason: string | null;
}): DeliveryOutcome => ({
  status: l.status,
  autologin_url: l.autologin_url,
  reason: l.reason,
});

/** The lead's state now: what a delivery that lost its lease answers. */
async function current(db: Db, id: string): Promise<DeliveryOutcome> {
  return outcomeOf((await loadLead(db, id))!);
}

class LeaseLost extends Error {}

type Started =
  { kind: 'started'; attemptId: string; lease: string } | { kind: 'full'; slot: CapSlot } | { kind: 'lost' };

const inFlightAttempt = (
  leadId: string,
  c: Candidate,
  attemptNo: number,
  injectionId: string | null = null,
): Insertable<LeadAttemptsTable> & { id: string } => ({
  id: newId(),
  lead_id: leadId,
  partner_id: c.partner.id,
  attempt_no: attemptNo,
  requested_at: nowIso(),
  duration_ms: null,
  http_status: null,
  outcome: 'in_flight',
  reason: null,
  response_excerpt: null,
  ...(injectionId ? { injection_id: injectionId } : {}),
});

/** How long the lead must stay leased for a call to candidate `c` from `now`, and its answer recorded. */
export const callLease = (c: Candidate, now: number) => now + callTimeoutMs(c.integration) + LEASE_MARGIN_MS;

/**
 * A new lead's first attempt (in_flight, to the plan's first candidate), for intake to store with
 * the lead: the plan has no cap to reserve (route.ts, planAtIntake), and intake leases the lead
 * past the call's deadline (callLease).
 */
export const firstAttempt = (plan: Plan) => inFlightAttempt(plan.lead.id, plan.order[0], 1);

/** One transaction: the caps, the attempt as in_flight, the lease past the call's timeout. */
async function startAttempt(
  db: Db,
  lead: LeadRow,
  c: Candidate,
  attemptNo: number,
  lease: string | null,
  newFlowId: string | null,
  injectionId: string | null = null,
): Promise<Started> {
  const needed = Date.now() + callTimeoutMs(c.integration) + LEASE_MARGIN_MS;
  // A lease that still runs past this call's deadline needs no push, and proves ownership by
  // itself: the sweep only takes leads whose lease has run out. (Intake's first lease usually
  // covers the first call: one write less per lead.)
  const covered = lease !== null && !newFlowId && Date.parse(lease) > needed;
  const inFlight = () => inFlightAttempt(lead.id, c, attemptNo, injectionId);
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
  const {
    id,
    first_name,
    last_name,
    email,
    phone,
    country,
    ip,
    language,
    funnel,
    sub_id1,
    sub_id2,
    sub_id3,
    sub_id4,
    sub_id5,
  } = l;
  return {
    id,
    first_name,
    last_name,
    email,
    phone,
    country,
    ip,
    language,
    funnel,
    sub_id1,
    sub_id2,
    sub_id3,
    sub_id4,
    sub_id5,
  };
}

const attemptAnswer = (call: PartnerCall) => ({
  duration_ms: Math.round(call.duration_ms),
  http_status: call.response?.status ?? null,
  outcome: call.outcome,
  reason: call.reason,
  response_excerpt: call.response ? call.response.body.slice(0, EXCERPT_CHARS) : null,
});

function deliveredLead(c: Candidate, call: PartnerCall, costCents: number | null, skipped: Skip[], country: string) {
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
    verdicts: verdictsJson(skipped),
    ...(costCents === null ? {} : { cost_cents: costCents }),
    ...saleAtDelivery(c.deal, country),
  };
}

/** The provider-log fact of a lead taken (modules/provider-log): accepted, with the payout it earns when it has one. */
const acceptedFacts = (lead: LeadRow, costCents: number | null) => [
  providerFact(lead.traffic_provider_id, lead.id, 'accepted', costCents ? { payout_cents: costCents } : {}),
];

/**
 * The partner's answer on the attempt; accepted → the lead delivered; else the caps given back;
 * all or nothing. false when the lead is no longer ours (the sweep took it over meanwhile).
 */
async function finishAttempt(
  db: Db,
  lead: LeadRow,
  c: Candidate,
  attemptId: string,
  lease: string,
  call: PartnerCall,
  costCents: number | null,
  skipped: Skip[],
): Promise<boolean> {
  if (isPostgres(db)) return finishInOneStatement(db, lead, c, attemptId, lease, call, costCents, skipped);
  return writeTransaction(db, async (trx) => {
    const attempt = await answerAttempt(trx, '', { attemptId, answer: attemptAnswer(call) });
    if (!attempt.length) return false;
    if (call.outcome !== 'accepted') {
      await release(trx, c.slots);
      return true;
    }
    const delivered = deliveredLead(c, call, costCents, skipped, lead.country);
    if (!(await markDelivered(trx, '', { leadId: lead.id, lease, delivered })).length) return false;
    await recordProviderFacts(trx, acceptedFacts(lead, costCents));
    return true;
  });
}

/**
 * finishAttempt on PostgreSQL: one statement, so one round trip instead of four (begin, two
 * updates, commit), atomic as a statement is. The lead and the caps change only where the
 * attempt did (`exists (select from a)`), as in the transaction SQLite runs (there statements
 * are cheap and commits are shared: write-batch.ts).
 */
async function finishInOneStatement(
  db: Db,
  lead: LeadRow,
  c: Candidate,
  attemptId: string,
  lease: string,
  call: PartnerCall,
  costCents: number | null,
  skipped: Skip[],
): Promise<boolean> {
  const accepted = call.outcome === 'accepted';
  const slots = reserved(c.slots).map((s) => ({ scope: s.scope, period: s.period }));
  const [row] = await finishStatement(db, '', {
    attemptId,
    answer: attemptAnswer(call),
    leadId: lead.id,
    lease,
    delivered: deliveredLead(c, call, costCents, skipped, lead.country),
    accepted,
    providerId: lead.traffic_provider_id,
    facts: acceptedFacts(lead, costCents).map((f) => ({ kind: f.kind, data: f.data, at: f.recorded_at })),
    releasing: !accepted && slots.length > 0,
    slots,
  });
  if (Number(row.attempt) === 0) return false;
  return accepted ? Number(row.lead) > 0 : true;
}

/** The lead `rejected` with `reason`, if still ours. */
async function reject(
  db: Db,
  lead: LeadRow,
  lease: string | null,
  reason: string,
  flowId: string | null,
  skipped: Skip[] = [],
): Promise<DeliveryOutcome> {
  const now = nowIso();
  const res = await writeTransaction(db, async (trx) => {
    const r = await trx
      .updateTable('leads')
      .set({
        status: 'rejected',
        reason,
        status_updated_at: now,
        lease_until: null,
        verdicts: verdictsJson(skipped),
        ...(flowId ? { flow_id: flowId } : {}),
      })
      .where(owned(lead.id, lease))
      .executeTakeFirst();
    if (Number(r.numUpdatedRows))
      await recordProviderFacts(trx, [
        providerFact(lead.traffic_provider_id, lead.id, 'refused', { status: 'rejected', reason: NOT_PLACED }),
      ]);
    return r;
  });
  return Number(res.numUpdatedRows) ? { status: 'rejected', autologin_url: null, reason } : current(db, lead.id);
}

/**
 * Delivers a `pending` lead its caller owns: route, eligibility, caps, waterfall (see the
 * brief of issue 4). Partner problems are outcomes, never exceptions; a database error throws
 * and leaves the lease to run out, and the recovery sweep takes the lead from there.
 */
export async function deliverLead(
  deps: DeliveryDeps,
  leadId: string,
  override: RouteOverride = {},
): Promise<DeliveryOutcome> {
  const { db } = deps;
  const lead = await loadLead(db, leadId, override.flowId ?? null);
  if (!lead) throw new Error(`deliverLead: no lead ${leadId}`);
  if (lead.status !== 'pending') return outcomeOf(lead);
  const planned = await plan(db, lead, override);
  if ('reject' in planned) return reject(db, lead, lead.lease_until, planned.reject, null);
  return offer(deps, planned, null);
}

/** Delivers a lead intake stored with its plan's first attempt (`attemptId`) recorded, leased until `lease`. */
export const deliverStarted = (deps: DeliveryDeps, planned: Plan, attemptId: string, lease: string) =>
  offer(deps, planned, { attemptId, lease });

/** Offers the lead to the plan's candidates in turn; the first one's attempt may be started already. */
async function offer(
  deps: DeliveryDeps,
  p: Plan,
  started: { attemptId: string; lease: string } | null,
): Promise<DeliveryOutcome> {
  const { db } = deps;
  const { lead, route } = p;
  let lease = lead.lease_until;
  let { attemptNo, calls } = p;
  const skipped = [...p.skipped];
  const tried: string[] = [];
  for (const [i, c] of p.order.entries()) {
    if (calls >= route.maxAttempts) {
      skipped.push(skip(c, 'not_tried', `not tried: ${attemptsPerLead(route.maxAttempts)}`));
      continue;
    }
    let attemptId: string;
    if (started) {
      [attemptId, lease] = [started.attemptId, started.lease];
      started = null;
    } else {
      // Only a change of flow_id is written: an update of it touches the analytics rollup rows.
      const newFlowId = route.flowId !== null && route.flowId !== lead.flow_id ? route.flowId : null;
      const s = await startAttempt(db, lead, c, attemptNo + 1, lease, newFlowId, p.injectionId ?? null);
      if (s.kind === 'lost') return current(db, lead.id);
      if (s.kind === 'full') {
        // Filled up by concurrent leads since the plan read the caps: skipped, not an attempt.
        skipped.push(capFull(c, s.slot, s.slot.cap));
        continue;
      }
      [attemptId, lease] = [s.attemptId, s.lease];
    }
    attemptNo++;
    calls++;
    lead.flow_id = route.flowId ?? lead.flow_id;
    const call = await deps.client.call(c.integration, leadForPartner(lead));
    deps.onPartnerCall?.({ id: c.partner.id, name: c.name }, call);
    // Taken: why each partner after this one was not offered the lead, recorded with it.
    const verdicts =
      call.outcome === 'accepted'
        ? [
            ...skipped,
            ...p.order.slice(i + 1).map((r) => skip(r, 'not_reached', `not reached: ${c.name} took the lead first`)),
          ]
        : skipped;
    if (!(await finishAttempt(db, lead, c, attemptId, lease!, call, p.costCents, verdicts))) {
      deps.log.warn({ leadId: lead.id }, 'delivery taken over by the recovery sweep; stopping');
      return current(db, lead.id);
    }
    if (call.outcome === 'accepted') return { status: 'delivered', autologin_url: call.autologin_url, reason: null };
    tried.push(`${c.name} (${call.reason ?? call.outcome})`);
  }
  return reject(
    db,
    lead,
    lease,
    rejectionReason(tried, skipped, route.maxAttempts),
    route.flowId !== lead.flow_id ? route.flowId : null,
    skipped,
  );
}
