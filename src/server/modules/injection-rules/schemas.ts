import { Type } from 'typebox';
import { HHMM, ResourceName } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { Window } from '../injections/schemas.js';
import { LeadFilterQuery } from '../leads/schemas.js';
import { WEEKDAYS } from './schedule.js';

const Id = Type.String({ minLength: 1, maxLength: 100 });

// The Leads filters without absolute dates (and without a sort order, which selects nothing):
// a rule's dates are a window relative to each run.
const { date_from: _from, date_to: _to, timezone: _tz, order: _order, ...RelativeFilters } = LeadFilterQuery;

export const RuleFilter = Type.Object(
  {
    ...RelativeFilters,
    last_days: Type.Integer({
      format: 'int32',
      minimum: 1,
      maximum: 365,
      description:
        'The leads whose `date_type` date lies in the last N days before each run (N × 24 h up to the scheduled time)',
    }),
  },
  {
    additionalProperties: false,
    title: 'InjectionRuleFilter',
    description:
      'The Leads filters (status, country, campaign…, as JSON values) with a relative window `last_days` on `date_type` instead of dates',
  },
);

const Days = Type.Array(Type.Unsafe<(typeof WEEKDAYS)[number]>({ type: 'string', enum: [...WEEKDAYS] }), {
  minItems: 1,
  maxItems: 7,
  uniqueItems: true,
  description: 'The weekdays it runs on (default: every day)',
});
const ScheduleFields = {
  time_zone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone, e.g. Europe/Berlin' }),
  at: { ...HHMM, description: 'Local time of day (24-hour HH:MM) the rule runs at' },
};

export const Schedule = Type.Object(
  { ...ScheduleFields, days: Type.Optional(Days) },
  {
    additionalProperties: false,
    title: 'InjectionRuleSchedule',
    description:
      'Runs at `at`, local time in `time_zone` (DST included: a time the clocks skip runs at the next valid minute, a time shown twice runs once)',
  },
);

const Target = {
  flow_id: Type.Optional({ ...Id, description: 'Send the leads through this flow (not archived)' }),
  partner_ids: Type.Optional(
    Type.Array(Id, {
      minItems: 1,
      maxItems: 50,
      uniqueItems: true,
      description: 'Or offer each lead to these partners (not archived), in this order, until one takes it',
    }),
  ),
};

const PerMinute = Type.Integer({
  format: 'int32',
  minimum: 1,
  maximum: 10_000,
  description: 'Leads sent per minute by each run',
});

export const CreateRule = Type.Object(
  {
    name: ResourceName,
    filter: RuleFilter,
    ...Target,
    per_minute: PerMinute,
    window: Type.Optional(Window),
    reoffer: Type.Boolean({ default: false, description: 'Also offer a lead to partners that were offered it before' }),
    schedule: Schedule,
    enabled: Type.Boolean({ default: true }),
  },
  { additionalProperties: false, description: 'Exactly one of flow_id and partner_ids' },
);

export const UpdateRule = Type.Object(
  {
    name: Type.Optional(ResourceName),
    filter: Type.Optional(RuleFilter),
    ...Target,
    per_minute: Type.Optional(PerMinute),
    window: Type.Optional(Type.Union([Window, Type.Null()], { description: 'null: any time' })),
    reoffer: Type.Optional(Type.Boolean()),
    schedule: Type.Optional(Schedule),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'The fields to change; flow_id or partner_ids replaces the target (send one of them)',
  },
);

export const PreviewRuleBody = Type.Object(
  { filter: RuleFilter },
  { additionalProperties: false, description: "The rule's filter" },
);

export const RulePreview = Type.Object(
  { count: Type.Integer({ description: 'How many leads a run now would take (0 when nothing matches)' }) },
  { title: 'InjectionRulePreview' },
);

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T) => Type.Union([t, Type.Null()]);

export const Rule = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    filter: RuleFilter,
    flow_id: Nullable(Type.String()),
    partner_ids: Type.Union([Type.Array(Type.String()), Type.Null()]),
    per_minute: Type.Integer(),
    window: Type.Union([Window, Type.Null()]),
    reoffer: Type.Boolean(),
    schedule: Type.Object({ ...ScheduleFields, days: Days }),
    enabled: Type.Boolean(),
    next_run_at: Nullable(Type.String({ format: 'date-time', description: 'The next scheduled run (null: disabled)' })),
    last_run: Type.Union(
      [
        Type.Object({
          at: Type.String({ format: 'date-time', description: 'The occurrence it ran for' }),
          injection_id: Nullable(Type.String({ description: 'The re-injection job it made' })),
          skipped: Nullable(Type.String({ description: 'Why it made no job (its creator was disabled…)' })),
        }),
        Type.Null(),
      ],
      { description: 'The latest run: the job it made, or why it was skipped; null: never run' },
    ),
    created_by: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { title: 'InjectionRule' },
);

export const RuleListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
