import { Type } from 'typebox';
import { CountryCode, Nullable } from '../../http/common-schemas.js';

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

const Verdict = Type.Union(
  [
    Type.Literal('offer'),
    Type.Literal('not_tried'),
    Type.Literal('cap_full'),
    Type.Literal('hours'),
    Type.Literal('country'),
    Type.Literal('paused'),
    Type.Literal('archived'),
    Type.Literal('already_offered'),
    Type.Literal('not_reached'),
  ],
  {
    description:
      'offer: would be offered the lead; not_tried: eligible, but the flow’s max_attempts are used up before its priority; ' +
      'cap_full: a cap has no room (see cap); hours: outside its working hours or the target’s schedule; country: the partner or ' +
      'target does not take the country; paused / archived: the partner is paused or deleted; already_offered: offered before a restart; ' +
      'not_reached (a real lead only): an earlier partner took the lead',
  },
);

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
