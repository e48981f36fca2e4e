import { sql, type ExpressionBuilder, type Expression, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { isPostgres, PREPARED } from '../db/database.js';
import { compiledOnce } from '../db/compiled.js';
import { fromJson, jsonArrayFrom, jsonObjectFrom } from '../db/json.js';
import type { Database, PartnersTable } from '../db/tables.js';
import { integrationFromStore } from './integrations/index.js';
import type { StoredIntegration } from './integrations/types.js';
import { capSlots, firstFull, readUsage, usedOf, type CapOwner, type CapSlot } from './caps.js';
import { refusal, type LeadTraits, type Schedule } from './eligibility.js';
import { qualityCheckOf, type QualityCheck } from './quality-rule.js';
import { capFull, skip, type Skip } from './skips.js';
import { tryOrder } from './order.js';
import { parsePrice, priceFor, type StoredPrice } from './prices.js';

// Where a lead may go: the lead with its route read in one statement, the flow's candidates, and
// the plan of a delivery (who is eligible, in which order). engine.ts runs the plan.

type Db = Kysely<Database>;

export interface RouteOverride {
  /** Route through this flow instead of the lead's own (redeliver). */
  flowId?: string;
  /** Offer the lead to this one partner only (redeliver). */
  partnerId?: string;
  /** Offer the lead to these partners, in this order (a re-injection job); at most one attempt each. */
  partnerIds?: string[];
  /** Resuming after a crash: skip partners this lead was already offered to. */
  resume?: boolean;
  /** Skip partners this lead was ever offered (a re-injection job without reoffer); the calls are not counted. */
  skipOffered?: boolean;
  /** The re-injection job this delivery is made for: its attempts carry the id. */
  injectionId?: string;
}

const LEAD_COLUMNS = [
  'leads.id',
  'leads.first_name',
  'leads.last_name',
  'leads.email',
  'leads.phone',
  'leads.country',
  'leads.ip',
  'leads.language',
  'leads.funnel',
  'leads.sub_id1',
  'leads.sub_id2',
  'leads.sub_id3',
  'leads.sub_id4',
  'leads.sub_id5',
  'leads.status',
  'leads.reason',
  'leads.autologin_url',
  'leads.campaign_id',
  'leads.flow_id',
  'leads.lease_until',
  'leads.traffic_provider_id',
  'leads.flags',
  'leads.quality_score',
] as const;

const PARTNER_COLUMNS = [
  'partners.id',
  'partners.name',
  'partners.status',
  'partners.archived_at',
  'partners.countries',
  'partners.working_hours',
  'partners.daily_cap',
  'partners.hourly_cap',
  'partners.total_cap',
  'partners.deal',
  'partners.integration',
  'partners.quality_rule',
] as const;

/** A partners row as PARTNER_COLUMNS reads it. */
type PartnerRow = Pick<
  Selectable<PartnersTable>,
  (typeof PARTNER_COLUMNS)[number] extends `partners.${infer K extends keyof PartnersTable}` ? K : never
>;

export interface Candidate {
  name: string;
  priority: number;
  weight: number;
  partner: CapOwner['partner'] & {
    status: 'active' | 'paused';
    archived_at: string | null;
    countries: string[];
    quality: QualityCheck;
  };
  target: (NonNullable<CapOwner['target']> & { countries: string[]; schedule: Schedule | null }) | null;
  integration: StoredIntegration;
  /** What the partner pays (prices.ts). */
  deal: StoredPrice | null;
  slots: CapSlot[];
}

export interface Route {
  /** The flow used (null: one partner chosen directly). */
  flowId: string | null;
  maxAttempts: number;
  /** In the flow's order. */
  candidates: Candidate[];
}

/**
 * A flow's row and its targets with their partners, as JSON (db/json.ts): what routing reads
 * with the lead (leadForRouting), and intake with the campaign (so a new lead's delivery reads
 * nothing more).
 */
export function routeOf<DB, TB extends keyof DB>(
  db: Db,
  eb: ExpressionBuilder<DB, TB>,
  flowId: Expression<string | null>,
) {
  const e = eb as unknown as ExpressionBuilder<Database, never>;
  // SQLite: json() keeps the value JSON when it is nested in another JSON object (intake's
  // campaigns), instead of a string to be parsed again.
  const nestable = <T>(value: RawBuilder<T>) => (isPostgres(db) ? value : sql<T>`json(${value})`);
  return [
    nestable(
      jsonObjectFrom(
        db,
        e
          .selectFrom('flows')
          .select(['flows.name', 'flows.status', 'flows.max_attempts', 'flows.review_rule', 'flows.archived_at'])
          .where('flows.id', '=', flowId),
      ),
    ).as('flow'),
    nestable(
      jsonArrayFrom(
        db,
        e
          .selectFrom('flow_targets as t')
          .innerJoin('partners', 'partners.id', 't.partner_id')
          .select(PARTNER_COLUMNS)
          .select([
            't.id as target_id',
            't.flow_id',
            't.position',
            't.priority',
            't.weight',
            't.countries as target_countries',
            't.schedule',
          ])
          .select([
            't.daily_cap as target_daily_cap',
            't.hourly_cap as target_hourly_cap',
            't.total_cap as target_total_cap',
            't.country_caps',
            't.cap_counts',
          ])
          .where('t.flow_id', '=', flowId),
      ),
    ).as('targets'),
  ] as const;
}

/**
 * The lead with what routing needs, in one statement (this is the hot path): its campaign, its
 * last attempt number, and the flow it goes through (`flowOverride`, else the lead's own, else
 * its campaign's) with that flow's targets and their partners.
 */
const leadForRouting = compiledOnce((db: Db, id: string, flowOverride: string | null) => {
  const routeFlow = sql<
    string | null
  >`coalesce(${flowOverride}, ${sql.ref('leads.flow_id')}, ${sql.ref('campaigns.flow_id')})`;
  return db
    .selectFrom('leads')
    .leftJoin('campaigns', 'campaigns.id', 'leads.campaign_id')
    .select(LEAD_COLUMNS)
    .select(['campaigns.name as campaign_name', 'campaigns.flow_id as campaign_flow_id', 'campaigns.payout'])
    .select((eb) => [
      eb
        .selectFrom('lead_attempts')
        .select((a) => a.fn.max('lead_attempts.attempt_no').as('n'))
        .whereRef('lead_attempts.lead_id', '=', 'leads.id')
        .as('last_attempt'),
      ...routeOf(db, eb, routeFlow),
    ])
    .where('leads.id', '=', id)
    .modifyEnd(sql.raw(PREPARED));
});

export const loadLead = (db: Db, id: string, flowOverride: string | null = null) =>
  leadForRouting(db, id, flowOverride).then((rows) => rows[0]);

export type LeadRow = NonNullable<Awaited<ReturnType<typeof loadLead>>>;

type TargetRow = Pick<
  NonNullable<CapOwner['target']>,
  'id' | 'flow_id' | 'daily_cap' | 'hourly_cap' | 'total_cap' | 'cap_counts'
> & {
  priority: number;
  weight: number;
  country_caps: string;
  countries: string;
  schedule: string | null;
};

function candidate(p: PartnerRow, t: TargetRow | null): Candidate {
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
      hourly_cap: p.hourly_cap,
      total_cap: p.total_cap,
      quality: qualityCheckOf(p.quality_rule),
    },
    target: t && {
      id: t.id,
      flow_id: t.flow_id,
      daily_cap: t.daily_cap,
      hourly_cap: t.hourly_cap,
      total_cap: t.total_cap,
      country_caps: JSON.parse(t.country_caps),
      cap_counts: t.cap_counts,
      countries: JSON.parse(t.countries),
      schedule: t.schedule ? JSON.parse(t.schedule) : null,
    },
    integration: integrationFromStore(p.integration),
    deal: parsePrice(p.deal),
    slots: [],
  };
}

/** The flow read by routeOf, as a route; or why no lead can be routed through it. */
export function flowRoute(read: Pick<LeadRow, 'flow' | 'targets'>, flowId: string): Route | string {
  const flow = fromJson(read.flow);
  if (!flow) return `Flow ${flowId} does not exist`;
  if (flow.archived_at) return `Flow ${flow.name} is deleted`;
  if (flow.status !== 'active') return `Flow ${flow.name} is paused`;
  const targets = fromJson(read.targets).sort((a, b) => a.position - b.position);
  const candidates = targets.map((r) =>
    candidate(r, {
      id: r.target_id,
      flow_id: r.flow_id,
      priority: r.priority,
      weight: r.weight,
      countries: r.target_countries,
      schedule: r.schedule,
      daily_cap: r.target_daily_cap,
      hourly_cap: r.target_hourly_cap,
      total_cap: r.target_total_cap,
      country_caps: r.country_caps,
      cap_counts: r.cap_counts,
    }),
  );
  return { flowId, maxAttempts: Number(flow.max_attempts), candidates };
}

/** The lead's flow, read with it, as a route; or why the lead cannot be routed at all. */
function leadRoute(lead: LeadRow, flowId: string | null): Route | string {
  if (!flowId)
    return lead.campaign_name === null
      ? 'The lead has no campaign and no flow'
      : `Campaign ${lead.campaign_name} has no flow`;
  return flowRoute(lead, flowId);
}

/** The flow (or partner) to route through, or why the lead cannot be routed at all. */
async function resolveRoute(db: Db, lead: LeadRow, override: RouteOverride): Promise<Route | string> {
  if (override.partnerId) {
    const p = await db
      .selectFrom('partners')
      .select(PARTNER_COLUMNS)
      .where('id', '=', override.partnerId)
      .executeTakeFirst();
    if (!p) return `Partner ${override.partnerId} does not exist`;
    return { flowId: null, maxAttempts: 1, candidates: [candidate(p, null)] };
  }
  if (override.partnerIds) {
    const rows = await db
      .selectFrom('partners')
      .select(PARTNER_COLUMNS)
      .where('id', 'in', override.partnerIds)
      .execute();
    const byId = new Map(rows.map((p) => [p.id, p]));
    const candidates = override.partnerIds.flatMap((id, i) => {
      const p = byId.get(id);
      return p ? [{ ...candidate(p, null), priority: i + 1 }] : [];
    });
    if (!candidates.length) return 'None of the chosen partners exists';
    return { flowId: null, maxAttempts: candidates.length, candidates };
  }
  return leadRoute(lead, override.flowId ?? lead.flow_id ?? lead.campaign_flow_id);
}

/** A delivery decided: engine.ts offers the lead to `order` one after another. */
export interface Plan {
  lead: LeadRow;
  route: Route;
  /** What a delivered lead costs (CPL payout), or null. */
  costCents: number | null;
  /** The lead's last attempt number so far. */
  attemptNo: number;
  /** Calls already made (a resumed delivery), counted against the flow's max_attempts. */
  calls: number;
  /** Partners passed over, with why. */
  skipped: Skip[];
  order: Candidate[];
  /** The re-injection job this delivery is made for (its attempts carry the id), or null. */
  injectionId?: string | null;
}

/** What a delivered lead costs: its campaign's CPL payout for the lead's country, or null. */
const costOf = (lead: LeadRow): number | null => priceFor(parsePrice(lead.payout), 'cpl', lead.country);

/** What eligibility looks at in a lead row: all on the row itself (intake's too), so no read. */
const traitsOf = (lead: LeadRow): LeadTraits => ({
  country: lead.country,
  flags: Number(lead.flags),
  score: lead.quality_score === null ? null : Number(lead.quality_score),
});

/** Candidates that may take the lead at `now`, caps aside (their cap slots filled in), and the others with why. */
export function eligibility(
  route: Route,
  lead: LeadTraits,
  offered: Set<string>,
  now: number,
  offeredReason = 'already offered before an interruption',
) {
  const skipped: Skip[] = [];
  const eligible: Candidate[] = [];
  for (const c of route.candidates) {
    const why = offered.has(c.partner.id)
      ? { verdict: 'already_offered' as const, reason: offeredReason }
      : refusal(c, lead, now);
    if (why) {
      skipped.push(skip(c, why.verdict, why.reason));
      continue;
    }
    c.slots = capSlots(c, now, lead.country);
    eligible.push(c);
  }
  return { eligible, skipped };
}

/** The eligible candidates whose caps have room by a read (the others join `skipped`, with the full cap's numbers). */
export async function withRoom(db: Db, eligible: Candidate[], skipped: Skip[]): Promise<Candidate[]> {
  const usage = await readUsage(
    db,
    eligible.flatMap((c) => c.slots),
  );
  return eligible.filter((c) => {
    const full = firstFull(c.slots, usage);
    if (full) skipped.push(capFull(c, full, usedOf(full, usage)));
    return !full;
  });
}

/** The delivery's plan: the route, who is eligible and not capped out, in the order to try. */
export async function plan(db: Db, lead: LeadRow, override: RouteOverride): Promise<Plan | { reject: string }> {
  const route = await resolveRoute(db, lead, override);
  if (typeof route === 'string') return { reject: route };
  // A resumed delivery continues the interrupted one: partners offered are skipped, and their
  // calls count toward max_attempts. A re-injection skips every partner ever offered the lead
  // (unless it re-offers), and starts a count of its own.
  const prior =
    override.resume || override.skipOffered
      ? await db.selectFrom('lead_attempts').select('partner_id').where('lead_id', '=', lead.id).execute()
      : [];
  const { eligible, skipped } = eligibility(
    route,
    traitsOf(lead),
    new Set(prior.map((a) => a.partner_id)),
    Date.now(),
    override.resume ? undefined : 'already offered this lead before',
  );
  const open = await withRoom(db, eligible, skipped);
  return {
    lead,
    route,
    costCents: costOf(lead),
    attemptNo: Number(lead.last_attempt ?? 0),
    calls: override.resume ? prior.length : 0,
    skipped,
    order: tryOrder(open),
    injectionId: override.injectionId ?? null,
  };
}

/**
 * A new lead's plan made at intake, from what intake read (the lead is not stored yet): only
 * when it needs nothing more from the database (a route that resolves, and no cap among the
 * eligible partners), else null and the delivery plans as usual. Then intake stores the lead
 * with its first attempt already recorded (engine.ts, firstAttempt).
 */
export function planAtIntake(lead: LeadRow, now: number): Plan | null {
  const route = lead.flow_id ? flowRoute(lead, lead.flow_id) : null;
  if (!route || typeof route === 'string' || route.maxAttempts < 1) return null;
  const { eligible, skipped } = eligibility(route, traitsOf(lead), new Set(), now);
  if (!eligible.length || eligible.some((c) => c.slots.length)) return null;
  return { lead, route, costCents: costOf(lead), attemptNo: 0, calls: 0, skipped, order: tryOrder(eligible) };
}
