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
import { Amount, ByCountry, CURRENCY, PriceModelSchema } from '../../distribution/prices.js';

/** Lead fields a body template may name as {{lead.<field>}}. */
export const LEAD_TEMPLATE_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'ip',
  'language',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
] as const;

export const DEFAULT_TIMEOUT_MS = 5000;

// Dot paths into the partner's JSON answer ("data.id", "items.0.url"); "" = not used.
const DotPath = (description: string) =>
  Type.String({ maxLength: 200, pattern: '^([^.\\s]+(\\.[^.\\s]+)*)?$', description });

const Method = Type.Union([Type.Literal('POST'), Type.Literal('GET'), Type.Literal('PUT')]);

const integrationFields = {
  method: Method,
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description: "http or https URL of the partner's lead API. Shown in full to readers: put secrets in headers.",
  }),
  success_path: DotPath('Dot path to a truthy value in the answer that means "accepted"; empty: any 2xx is accepted'),
  lead_id_path: DotPath("Dot path to the partner's own lead id in the answer; empty: none"),
  autologin_path: DotPath('Dot path to the autologin URL in the answer; empty: none'),
  timeout_ms: Type.Integer({
    format: 'int32',
    minimum: 100,
    maximum: 60_000,
    description: 'Request timeout (100–60000 ms)',
  }),
};

const BodyTemplate = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'The JSON body sent to the partner. Strings may hold {{lead.<field>}} placeholders, ' +
      `field one of: ${LEAD_TEMPLATE_FIELDS.join(', ')}.`,
  },
);

/** What an answer shows: header values masked. */
export const Integration = Type.Object(
  {
    ...integrationFields,
    headers: Type.Object(
      {},
      {
        additionalProperties: Type.String(),
        description:
          'Header values are write-only: shown masked ("••••" + the last 4 characters when longer than 8, else "••••")',
      },
    ),
    body_template: BodyTemplate,
  },
  { title: 'PartnerIntegration' },
);

/** What a request sends. Defaults fill in whatever is left out. */
export const IntegrationInput = Type.Object(
  {
    method: Type.Optional({ ...Method, default: 'POST' }),
    url: integrationFields.url,
    headers: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: Type.String({ maxLength: 4096 }),
          maxProperties: 50,
          default: {},
          description:
            'Request headers (name → value). Values are write-only. On PATCH, a value sent back exactly as ' +
            "answers show it (masked) keeps the stored value of that header while the URL's scheme, host and " +
            'port stay the same (a masked value for a new destination is refused); any other value replaces it.',
        },
      ),
    ),
    body_template: Type.Optional({ ...BodyTemplate, default: {} }),
    success_path: Type.Optional({ ...integrationFields.success_path, default: '' }),
    lead_id_path: Type.Optional({ ...integrationFields.lead_id_path, default: '' }),
    autologin_path: Type.Optional({ ...integrationFields.autologin_path, default: '' }),
    timeout_ms: Type.Optional({ ...integrationFields.timeout_ms, default: DEFAULT_TIMEOUT_MS }),
  },
  { additionalProperties: false, title: 'PartnerIntegrationInput' },
);
export type IntegrationInput = Static<typeof IntegrationInput>;

/** Stored form (partners.integration JSON): header values in full. */
export interface StoredIntegration {
  method: 'POST' | 'GET' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body_template: Record<string, unknown>;
  success_path: string;
  lead_id_path: string;
  autologin_path: string;
  timeout_ms: number;
}

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
