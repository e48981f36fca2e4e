import { sql } from 'kysely';
import type { DB } from '../../db/database.js';
import { notFound } from '../../http/errors.js';
import { fromJson } from '../../db/json.js';
import { eligibility, flowRoute, routeOf, withRoom, type Candidate } from '../../distribution/route.js';
import { attemptsPerLead, rejectionReason, type Skip } from '../../distribution/skips.js';
import { flagNames, maskOf, type Flag } from '../../db/lead-flags.js';

// "Where would this lead go?": the routing engine's own eligibility and cap checks (route.ts) on
// a lead that is not stored, at a chosen instant. Nothing is written, no partner is called, and
// caps are read, not reserved. The order within one priority is random by weight when a real
// lead is routed; here the offered ones come by weight, each with its share.

export interface SimulationInput {
  country: string;
  /** The fraud flags the lead would raise, and its score (null: not scored): partners' quality rules look at them. */
  flags: Flag[];
  quality_score: number | null;
  campaign_id?: string;
  flow_id?: string;
  at: number;
}

/** The campaign's own checks, as intake makes them: why its leads go nowhere, or null. */
async function campaignOf(db: DB, id: string, country: string) {
  const c =
    (await db
      .selectFrom('campaigns')
      .select(['id', 'name', 'status', 'countries', 'flow_id', 'archived_at'])
      .where('id', '=', id)
      .executeTakeFirst()) ?? notFound('campaign');
  const countries = JSON.parse(c.countries) as string[];
  let blocked: string | null = null;
  if (c.archived_at) blocked = `Campaign ${c.name} is deleted`;
  else if (c.status !== 'active') blocked = `Campaign ${c.name} is paused: intake rejects its leads`;
  else if (countries.length && !countries.includes(country))
    blocked = `Campaign ${c.name} does not accept ${country} leads`;
  else if (!c.flow_id) blocked = `Campaign ${c.name} has no flow`;
  return { flowId: c.flow_id, blocked };
}

const row = (c: Candidate) => ({
  partner_id: c.partner.id,
  partner_name: c.name,
  target_id: c.target!.id,
  priority: c.priority,
  weight: c.weight,
});

export async function simulate(db: DB, input: SimulationInput) {
  const flags = maskOf(input.flags);
  const base = {
    at: new Date(input.at).toISOString(),
    country: input.country,
    flags: flagNames(flags),
    quality_score: input.quality_score,
    campaign_id: input.campaign_id ?? null,
  };
  const campaign = input.campaign_id ? await campaignOf(db, input.campaign_id, input.country) : null;
  const flowId = campaign ? campaign.flowId : input.flow_id!;
  const nowhere = (reason: string) => ({
    ...base,
    flow_id: flowId,
    flow_name: null,
    max_attempts: null,
    routable: false,
    reason,
    candidates: [],
  });
  if (!flowId) return nowhere(campaign!.blocked!);
  const read = await db.selectNoFrom((eb) => routeOf(db, eb, sql<string>`${flowId}`)).executeTakeFirstOrThrow();
  const route = flowRoute(read, flowId);
  if (typeof route === 'string') {
    if (!campaign && route.endsWith('does not exist')) notFound('flow');
    return nowhere(campaign?.blocked ?? route);
  }
  const flow = { name: fromJson(read.flow)!.name, max_attempts: route.maxAttempts };

  const { eligible, skipped } = eligibility(
    route,
    { country: input.country, flags, score: input.quality_score },
    new Set(),
    input.at,
  );
  const open = await withRoom(db, eligible, skipped);
  const skips = new Map<string, Skip>(skipped.map((s) => [s.partner_id, s]));
  // In the order routing considers them: priority; within one, the offered by weight (their
  // chance to go first), then the others in the flow's order.
  const byPriority = [...new Set(route.candidates.map((c) => c.priority))].sort((a, b) => a - b);
  const candidates = [];
  let before = 0; // offered candidates of earlier priorities: calls made before this priority's
  for (const p of byPriority) {
    const offered = open.filter((c) => c.priority === p).sort((a, b) => b.weight - a.weight);
    const total = offered.reduce((n, c) => n + c.weight, 0);
    const notTried = before >= route.maxAttempts;
    for (const c of offered) {
      candidates.push({
        ...row(c),
        ...(notTried
          ? {
              verdict: 'not_tried' as const,
              reason: `not tried: ${attemptsPerLead(route.maxAttempts)}, all taken by earlier priorities if they decline`,
              share: null,
            }
          : { verdict: 'offer' as const, reason: null, share: Math.round((c.weight / total) * 10_000) / 10_000 }),
        cap: null,
      });
    }
    for (const c of route.candidates.filter((x) => x.priority === p && skips.has(x.partner.id))) {
      const s = skips.get(c.partner.id)!;
      candidates.push({ ...row(c), verdict: s.verdict, reason: s.reason, share: null, cap: s.cap ?? null });
    }
    before += offered.length;
  }
  const routable = !campaign?.blocked && candidates.some((c) => c.verdict === 'offer');
  const reason = campaign?.blocked ?? (routable ? null : rejectionReason([], skipped, route.maxAttempts));
  return {
    ...base,
    flow_id: flowId,
    flow_name: flow.name,
    max_attempts: route.maxAttempts,
    routable,
    reason,
    candidates,
  };
}
