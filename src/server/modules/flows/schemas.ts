import { DEFAULT_REVIEW_RULE, ReviewRule, ReviewRuleInput } from '../quality/review-rule.js';
import { Type, type Static } from 'typebox';
import {
  ActiveStatus,
  CountryCode,
  NullableTimestamp,
  ResourceListQuery,
  ResourceName,
  Timestamp,
  WorkingHours,
} from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';

export const MAX_TARGETS = 50;

const Ref = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });
const Priority = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: 1000,
  description: 'Lower is tried first; targets with the same priority share leads by weight',
});
const Weight = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: 10_000,
  description: 'Share of leads among targets of the same priority',
});
const MaxAttempts = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: 10,
  description: 'How many partners a lead is offered to at most',
});
const scheduleOptions = { description: "Working-hours override; null: the partner's own working hours" };
const countriesOptions = {
  uniqueItems: true,
  maxItems: 250,
  description: "ISO 3166-1 alpha-2; empty: the partner's own countries",
};
const CapValue = Type.Integer({ format: 'int32', minimum: 0, maximum: 10_000_000 });
const capOf = (what: string) => ({ description: `${what} for this target; null: no cap of its own` });
const countryCapsOptions = {
  maxProperties: 250,
  additionalProperties: false,
  description: 'Daily caps per lead country, e.g. {"DE": 50, "AT": 20}; a country left out has no cap of its own here',
};
const CapCounts = Type.Union([Type.Literal('deliveries'), Type.Literal('ftds')], {
  description:
    "What this target's caps count: leads delivered (a slot is reserved before the partner is called), or FTDs recorded (deliveries stop once the count reaches the cap)",
});

export const FlowTarget = Type.Object(
  {
    id: Type.String(),
    partner_id: Type.String(),
    partner_name: Type.String(),
    priority: Type.Integer(),
    weight: Type.Integer(),
    daily_cap: Type.Union([Type.Integer(), Type.Null()]),
    hourly_cap: Type.Union([Type.Integer(), Type.Null()]),
    total_cap: Type.Union([Type.Integer(), Type.Null()]),
    country_caps: Type.Record(Type.String(), Type.Integer(), { description: 'Daily caps per lead country' }),
    cap_counts: CapCounts,
    countries: Type.Array(Type.String()),
    schedule: Type.Union([WorkingHours, Type.Null()]),
  },
  { title: 'FlowTarget' },
);

export const Flow = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: ActiveStatus,
    max_attempts: Type.Integer(),
    review: ReviewRule,
    targets: Type.Array(FlowTarget, { description: 'In the order they were given' }),
    created_at: Timestamp,
    updated_at: Timestamp,
    archived_at: NullableTimestamp,
  },
  { title: 'Flow' },
);

// Defaults are filled in by the validator: fine here, because a target is always sent whole.
export const FlowTargetInput = Type.Object(
  {
    partner_id: Ref('A partner that is not archived; at most once per flow'),
    priority: Priority,
    weight: Type.Optional(Type.Integer({ ...Weight, default: 100 })),
    daily_cap: Type.Optional(
      Type.Union([CapValue, Type.Null()], { ...capOf("Leads per day of the partner's local time"), default: null }),
    ),
    hourly_cap: Type.Optional(
      Type.Union([CapValue, Type.Null()], { ...capOf("Leads per hour of the partner's local time"), default: null }),
    ),
    total_cap: Type.Optional(Type.Union([CapValue, Type.Null()], { ...capOf('Leads in all'), default: null })),
    country_caps: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Z]{2}$', maxLength: 2 }), CapValue, {
        ...countryCapsOptions,
        default: {},
      }),
    ),
    cap_counts: Type.Optional({ ...CapCounts, default: 'deliveries' }),
    countries: Type.Optional(Type.Array(CountryCode, { ...countriesOptions, default: [] })),
    schedule: Type.Optional(Type.Union([WorkingHours, Type.Null()], { ...scheduleOptions, default: null })),
  },
  { additionalProperties: false, title: 'FlowTargetInput' },
);

export const CreateFlow = Type.Object(
  {
    name: ResourceName,
    status: Type.Optional(Type.Union([Type.Literal('active'), Type.Literal('paused')], { default: 'active' })),
    max_attempts: Type.Optional(Type.Integer({ ...MaxAttempts, default: 3 })),
    review: Type.Optional({ ...ReviewRuleInput, default: DEFAULT_REVIEW_RULE }),
    targets: Type.Optional(
      Type.Array(FlowTargetInput, {
        maxItems: MAX_TARGETS,
        default: [],
        description: `Ordered; at most ${MAX_TARGETS}`,
      }),
    ),
  },
  { additionalProperties: false },
);

// No defaults on a PATCH: an omitted field keeps its value.
export const UpdateFlow = Type.Object(
  {
    name: Type.Optional(ResourceName),
    status: Type.Optional(ActiveStatus),
    max_attempts: Type.Optional(MaxAttempts),
    review: Type.Optional(ReviewRuleInput),
    targets: Type.Optional(
      Type.Array(FlowTargetInput, {
        maxItems: MAX_TARGETS,
        description: `Replaces the whole list, in one transaction; at most ${MAX_TARGETS}`,
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const FlowListQuery = Type.Object(
  {
    ...PageQuery,
    ...ResourceListQuery,
    partner_id: Type.Optional(Ref('Only flows with a target for this partner')),
  },
  { additionalProperties: false },
);

export type FlowTargetInputT = Static<typeof FlowTargetInput>;
