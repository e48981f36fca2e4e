import { Type } from 'typebox';
import { CountryCode, Nullable } from '../../http/common-schemas.js';
import { REFUSALS, type Refusal } from '../../distribution/eligibility.js';
import { FLAGS, type Flag } from '../../db/lead-flags.js';

const FlagName = Type.Unsafe<Flag>({ type: 'string', enum: [...FLAGS] });
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

const CapWindow = Type.Union([Type.Literal('day'), Type.Literal('hour'), Type.Literal('total')]);
const CapCounts = Type.Union([Type.Literal('deliveries'), Type.Literal('ftds')]);

export const FullCap = Type.Object(
  {
    kind: Type.String({
      description:
        'daily | hourly | total (the partner’s), flow_daily | flow_hourly | flow_total | flow_country_daily (the flow target’s)',
    }),
    window: CapWindow,
    country: Nullable(Type.String({ description: 'For a country’s cap' })),
    counts: CapCounts,
    used: Type.Integer({ description: 'Counted in the window (deliveries include those in progress)' }),
    cap: Type.Integer(),
  },
  { title: 'FullCap' },
);

/** What each verdict means, for the API's description (a record over the verdicts: a new one needs its words here). */
const VERDICT_TEXT: Record<'offer' | Refusal, string> = {
  offer: 'would be offered the lead',
  not_tried: 'eligible, but the flow’s max_attempts are used up before its priority',
  cap_full: 'a cap has no room (see cap)',
  hours: 'outside its working hours or the target’s schedule',
  country: 'the partner or target does not take the country',
  quality: 'the partner’s quality rule refuses one of the lead’s fraud flags, or its score is below the rule’s minimum',
  paused: 'the partner is paused',
  archived: 'the partner is deleted',
  already_offered: 'offered before a restart (or before a re-injection)',
  not_reached: '(a real lead only) an earlier partner took the lead',
};

const Verdict = Type.Unsafe<'offer' | Refusal>({
  type: 'string',
  enum: ['offer', ...REFUSALS],
  description: Object.entries(VERDICT_TEXT)
    .map(([v, text]) => `${v}: ${text}`)
    .join('; '),
});

/** Why a partner of the lead's flow was not offered the lead (GET /api/leads/{id}). */
export const LeadVerdict = Type.Object(
  {
    partner_id: Type.String(),
    partner_name: Nullable(Type.String()),
    verdict: Verdict,
    reason: Type.String(),
    cap: Type.Union([FullCap, Type.Null()]),
  },
  { title: 'LeadVerdict' },
);

export const SimulateBody = Type.Object(
  {
    country: CountryCode,
    flags: Type.Optional(
      Type.Array(FlagName, {
        uniqueItems: true,
        maxItems: FLAGS.length,
        default: [],
        description:
          'The fraud flags the lead would raise (partners refusing one of them are not offered it); default: none',
      }),
    ),
    quality_score: Type.Optional(
      Type.Union([Type.Integer({ format: 'int32', minimum: 0, maximum: 100 }), Type.Null()], {
        default: null,
        description:
          'The lead’s quality score (0–100), checked against partners’ min_score; null (the default): not scored',
      }),
    ),
    campaign_id: Type.Optional(Id('Route as a lead of this campaign (through its flow, after its own checks)')),
    flow_id: Type.Optional(Id('Route through this flow directly')),
    at: Type.Optional(
      Type.String({
        format: 'date-time',
        maxLength: 40,
        description: 'When the lead would arrive (default: now): working hours and cap windows of that instant',
      }),
    ),
  },
  { additionalProperties: false, title: 'RoutingSimulation' },
);

export const SimulatedCandidate = Type.Object(
  {
    partner_id: Type.String(),
    partner_name: Type.String(),
    target_id: Type.String(),
    priority: Type.Integer(),
    weight: Type.Integer(),
    verdict: Verdict,
    reason: Nullable(Type.String({ description: 'Why not offered, in the words a lead’s reason uses' })),
    share: Nullable(
      Type.Number({
        description: 'With verdict offer: the chance to be offered first among those of its priority (by weight)',
      }),
    ),
    cap: Type.Union([FullCap, Type.Null()]),
  },
  { title: 'SimulatedCandidate' },
);

export const SimulationResult = Type.Object(
  {
    at: Type.String({ format: 'date-time' }),
    country: Type.String(),
    flags: Type.Array(FlagName),
    quality_score: Nullable(Type.Integer()),
    campaign_id: Nullable(Type.String()),
    flow_id: Nullable(Type.String()),
    flow_name: Nullable(Type.String()),
    max_attempts: Nullable(Type.Integer()),
    routable: Type.Boolean({ description: 'false: no partner would be offered the lead (reason says why)' }),
    reason: Nullable(Type.String()),
    candidates: Type.Array(SimulatedCandidate, {
      description: 'In the order they would be considered: priority, then offered ones by weight',
    }),
  },
  { title: 'RoutingSimulationResult' },
);

const Usage = Type.Union([
  Type.Object({ used: Type.Integer(), cap: Type.Integer(), period: Type.String() }, { title: 'CapUse' }),
  Type.Null(),
]);

export const CapUsageRow = Type.Object(
  {
    partner_id: Type.String(),
    partner_name: Type.String(),
    flow_id: Nullable(Type.String({ description: 'null: the partner’s own caps' })),
    flow_name: Nullable(Type.String()),
    target_id: Nullable(Type.String()),
    country: Nullable(Type.String({ description: 'A country’s own daily cap' })),
    counts: CapCounts,
    day: Usage,
    hour: Usage,
    total: Usage,
  },
  { title: 'CapUsage' },
);

export const CapUsage = Type.Object(
  { at: Type.String({ format: 'date-time' }), data: Type.Array(CapUsageRow) },
  { title: 'CapUsagePage' },
);
