import { Type, type Static } from 'typebox';
import {
  ActiveStatus,
  Cap,
  Countries,
  CountryCode,
  NullableTimestamp,
  ResourceListQuery,
  ResourceName,
  Timestamp,
  WorkingHours,
} from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { Integration, IntegrationInput } from '../../distribution/integrations/index.js';
import { Amount, ByCountry, CURRENCY, PriceModelSchema } from '../../distribution/prices.js';
import { DEFAULT_QUALITY_RULE, QualityRule, QualityRuleInput } from '../../distribution/quality-rule.js';

const NullableWorkingHours = Type.Union([WorkingHours, Type.Null()], { description: 'null: always open' });

const CrgPeriod = Type.Union([Type.Literal('week'), Type.Literal('month')], {
  description: 'Over which calendar periods the rate is promised (the CRG report groups by them)',
});

const Deal = Type.Union(
  [
    Type.Object(
      {
        model: PriceModelSchema,
        amount: Type.Number(),
        currency: Type.Literal(CURRENCY),
        by_country: Type.Record(Type.String(), Type.Number(), {
          description: 'Prices for leads from these countries, replacing amount there',
        }),
        crg: Type.Union([
          Type.Object(
            { rate: Type.Number({ description: 'Promised FTD rate, percent' }), period: CrgPeriod },
            { title: 'Crg' },
          ),
          Type.Null(),
        ]),
      },
      { title: 'Deal' },
    ),
    Type.Null(),
  ],
  { description: 'What the partner pays; null: no deal (revenue is what its postbacks report)' },
);

const DealInput = Type.Union(
  [
    Type.Object(
      {
        model: PriceModelSchema,
        amount: Amount('What the partner pays per delivered lead (cpl) or per FTD (cpa)'),
        currency: Type.Optional(
          Type.Literal(CURRENCY, { default: CURRENCY, description: "The installation's currency; only USD for now" }),
        ),
        by_country: Type.Optional({
          ...ByCountry('Prices per lead country, replacing amount there, e.g. {"DE": 45}'),
          default: {},
        }),
        crg: Type.Optional({
          ...Type.Union([
            Type.Object(
              {
                rate: Type.Number({
                  exclusiveMinimum: 0,
                  maximum: 100,
                  description: 'The FTD rate promised, in percent (e.g. 10), at most 2 decimals',
                }),
                period: Type.Optional({ ...CrgPeriod, default: 'month' }),
              },
              { additionalProperties: false, title: 'CrgInput' },
            ),
            Type.Null(),
          ]),
          default: null,
          description:
            'A conversion-rate guarantee, with a CPL deal only: the leads delivered in a period should convert at this rate; the CRG report computes the shortfall',
        }),
      },
      { additionalProperties: false, title: 'DealInput' },
    ),
    Type.Null(),
  ],
  {
    description:
      'What the partner pays, recorded on each lead as revenue when it is delivered (cpl) or converts (cpa); null: no deal',
  },
);

const TRACK =
  "Answer traffic providers Leadgate's own link (<public base URL>/go/<token>) instead of the partner's autologin URL, " +
  'and record each time it is opened. Only while the hosting panel has a public base URL set; operators still see the ' +
  "partner's URL. Off by default: some partners check the referrer.";
const SINGLE_USE = 'With track_autologin: the link redirects once; later opens get a plain page without it';

const partnerFields = {
  id: Type.String(),
  name: Type.String(),
  status: ActiveStatus,
  countries: Type.Array(Type.String(), { description: 'ISO alpha-2 codes accepted; empty: every country' }),
  working_hours: NullableWorkingHours,
  daily_cap: Type.Union([Type.Integer(), Type.Null()]),
  hourly_cap: Type.Union([Type.Integer(), Type.Null()], {
    description: "Leads per hour of the partner's local time; null: none",
  }),
  total_cap: Type.Union([Type.Integer(), Type.Null()]),
  deal: Deal,
  pause_after_failures: Type.Union([Type.Integer(), Type.Null()], {
    description: 'Paused after this many failed calls in a row; null: never',
  }),
  consecutive_failures: Type.Integer({
    format: 'int32',
    description: 'Failed calls in a row now (a call answered resets it)',
  }),
  integration: Integration,
  track_autologin: Type.Boolean({ description: TRACK }),
  autologin_single_use: Type.Boolean({ description: SINGLE_USE }),
  quality: QualityRule,
  postback_token_prefix: Type.String({
    description: 'The non-secret start of the postback token (lgp_ + id), to recognise it',
  }),
  created_at: Timestamp,
  updated_at: Timestamp,
  archived_at: { ...NullableTimestamp, description: 'Set when deleted while leads still refer to it' },
};

export const Partner = Type.Object(partnerFields, { title: 'Partner' });
export type Partner = Static<typeof Partner>;

export const PartnerWithToken = Type.Object(
  {
    ...partnerFields,
    postback_token: Type.String({ description: 'lgp_… token. Shown only in this answer; rotate it to get a new one.' }),
    postback_url: Type.String({
      description:
        'Where the partner posts conversions: <public base URL>/api/postback/<token> when the hosting panel has a public ' +
        "base URL set, else the path /api/postback/<token> (put your server's address before it).",
    }),
  },
  { title: 'PartnerWithPostbackToken' },
);

export const CreatePartner = Type.Object(
  {
    name: ResourceName,
    status: Type.Optional({ ...ActiveStatus, default: 'active' }),
    countries: Type.Optional({ ...Countries, default: [] }),
    working_hours: Type.Optional({ ...NullableWorkingHours, default: null }),
    daily_cap: Type.Optional({ ...Cap, default: null }),
    hourly_cap: Type.Optional({
      ...Cap,
      default: null,
      description:
        "Leads per hour of the partner's local time (its working hours' time zone, else UTC); null: no cap; at most daily_cap",
    }),
    total_cap: Type.Optional({
      ...Cap,
      default: null,
      description: 'null: no cap; when both are set, at least daily_cap',
    }),
    deal: Type.Optional({ ...DealInput, default: null }),
    pause_after_failures: Type.Optional({
      ...Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 1000 }), Type.Null()], {
        description:
          'Pause the partner (audited, with an alert) after this many failed calls in a row (no answer, an error, HTTP 5xx); null: never',
      }),
      default: null,
    }),
    integration: IntegrationInput,
    track_autologin: Type.Optional(Type.Boolean({ default: false, description: TRACK })),
    autologin_single_use: Type.Optional(Type.Boolean({ default: false, description: SINGLE_USE })),
    quality: Type.Optional({ ...QualityRuleInput, default: DEFAULT_QUALITY_RULE }),
  },
  { additionalProperties: false },
);

export const UpdatePartner = Type.Object(
  {
    name: Type.Optional(ResourceName),
    status: Type.Optional(ActiveStatus),
    countries: Type.Optional(Countries),
    working_hours: Type.Optional(NullableWorkingHours),
    daily_cap: Type.Optional(Cap),
    hourly_cap: Type.Optional(Cap),
    total_cap: Type.Optional(Cap),
    deal: Type.Optional(DealInput),
    pause_after_failures: Type.Optional(
      Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 1000 }), Type.Null()], {
        description:
          'Pause the partner (audited, with an alert) after this many failed calls in a row (no answer, an error, HTTP 5xx); null: never',
      }),
    ),
    integration: Type.Optional({
      ...IntegrationInput,
      description: 'Replaces the whole integration (masked header values keep their stored value)',
    }),
    track_autologin: Type.Optional(Type.Boolean({ description: TRACK })),
    autologin_single_use: Type.Optional(Type.Boolean({ description: SINGLE_USE })),
    quality: Type.Optional(QualityRuleInput),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdatePartner = Static<typeof UpdatePartner>;

export const PartnerListQuery = Type.Object(
  {
    ...PageQuery,
    ...ResourceListQuery,
    country: Type.Optional({
      ...CountryCode,
      description: 'Only partners accepting this country (listing it, or accepting every country)',
    }),
  },
  { additionalProperties: false },
);

/** A partner is "failing" after this many failed calls in a row (no answer, an error, HTTP 5xx). */
export const FAILING_AFTER = 3;

const CapFill = Type.Union(
  [
    Type.Object(
      {
        used: Type.Integer({ description: 'Leads delivered (or being delivered) in the window' }),
        cap: Type.Integer(),
      },
      { title: 'CapFill' },
    ),
    Type.Null(),
  ],
  { description: 'null: no such cap' },
);

const PartnerHealth = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    status: ActiveStatus,
    health: Type.Union([Type.Literal('failing'), Type.Literal('capped'), Type.Literal('paused'), Type.Literal('ok')], {
      description:
        `paused: status is paused (whatever its calls did); failing: active, and its last ${FAILING_AFTER} or more ` +
        'calls in a row failed (no answer, an error, HTTP 5xx; consecutive_failures); capped: active, not failing, ' +
        'and one of its own caps (daily, hourly, total) is full; ok: none of these',
    }),
    consecutive_failures: Type.Integer({ format: 'int32', description: 'Failed calls in a row now' }),
    today: Type.Object(
      {
        day: Type.String({
          description: "The partner's day (YYYY-MM-DD) in its working hours' time zone, else UTC: its daily cap's day",
        }),
        calls: Type.Integer({ description: 'Calls made to the partner that day (in progress included)' }),
        delivered: Type.Integer({ description: 'Calls the partner accepted' }),
        refused: Type.Integer({ description: 'Calls the partner answered with a refusal (not HTTP 5xx)' }),
        failed: Type.Integer({ description: 'Calls that failed: no answer in time, an error, HTTP 5xx' }),
      },
      { title: 'PartnerHealthToday' },
    ),
    caps: Type.Object(
      {
        day: CapFill,
        hour: CapFill,
        total: CapFill,
      },
      {
        title: 'PartnerCapFill',
        description: "The partner's own caps (not its flows'), counted as the engine reserves them",
      },
    ),
    last_call: Type.Union(
      [
        Type.Object(
          {
            at: Timestamp,
            outcome: Type.Union(
              [
                Type.Literal('in_flight'),
                Type.Literal('accepted'),
                Type.Literal('rejected'),
                Type.Literal('timeout'),
                Type.Literal('error'),
              ],
              { description: 'rejected: answered with a refusal (see http_status)' },
            ),
            http_status: Type.Union([Type.Integer(), Type.Null()]),
          },
          { title: 'PartnerLastCall' },
        ),
        Type.Null(),
      ],
      { description: 'The latest call to the partner, any day; null: never called' },
    ),
  },
  { title: 'PartnerHealth' },
);
export type PartnerHealth = Static<typeof PartnerHealth>;

export const PartnerHealthList = Type.Object(
  {
    at: Timestamp,
    failing_after: Type.Integer({ description: 'Failed calls in a row that make an active partner failing' }),
    data: Type.Array(PartnerHealth, { description: 'Failing first, then capped, paused, ok; by name within each' }),
  },
  { title: 'PartnerHealthList' },
);
