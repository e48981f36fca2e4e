import { Type, type Static } from 'typebox';
import { CountryCode } from '../../http/common-schemas.js';
import { DATE_INPUT_PATTERN, MAX_RANGE_DAYS } from './range.js';

export const DIMENSIONS = [
  'day',
  'week',
  'month',
  'partner',
  'traffic_provider',
  'campaign',
  'flow',
  'country',
] as const;
export type Dimension = (typeof DIMENSIONS)[number];
export const TIME_DIMENSIONS = new Set<Dimension>(['day', 'week', 'month']);

const DateInput = (what: string) =>
  Type.Optional(
    Type.String({
      maxLength: 40,
      pattern: DATE_INPUT_PATTERN,
      description: `${what} A day (YYYY-MM-DD, in \`timezone\`) or an ISO 8601 date-time with Z or an offset.`,
    }),
  );

const IdList = (what: string) =>
  Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: 50,
      description: `Only leads of these ${what} (repeat the parameter for several)`,
    }),
  );

export const AnalyticsQuery = {
  date_from: DateInput('Start, inclusive; default: 29 days before date_to (30 days in all).'),
  date_to: DateInput(
    `End: a day counts through its last instant, a date-time is exclusive; default: today. At most ${MAX_RANGE_DAYS} days after date_from.`,
  ),
  timezone: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "IANA time zone of days, weeks and months, e.g. Europe/Berlin; default: the operator's own",
    }),
  ),
  date_type: Type.Union([Type.Literal('registration'), Type.Literal('ftd')], {
    default: 'registration',
    description:
      'registration: every measure counts on the day the lead registered (leads.created_at). ' +
      'ftd: FTDs, and the revenue of leads that made one, count on the day of the first deposit (leads.ftd_at); ' +
      'leads, statuses, cost and the revenue of leads without an FTD (e.g. paid per lead) stay on the registration day.',
  }),
  partner_id: IdList('partners'),
  traffic_provider_id: IdList('traffic providers'),
  campaign_id: IdList('campaigns'),
  flow_id: IdList('flows'),
  country: Type.Optional(
    Type.Array(CountryCode, {
      minItems: 1,
      maxItems: 250,
      description: 'Only leads from these countries (repeat the parameter for several)',
    }),
  ),
};

export const SummaryQuery = Type.Object(AnalyticsQuery, { additionalProperties: false });

const DimensionSchema = (description: string, extra: { default?: Dimension } = {}) =>
  Type.Union(
    DIMENSIONS.map((d) => Type.Literal(d)),
    { description, ...extra },
  );

export const ReportQuery = Type.Object(
  {
    group_by: DimensionSchema('First level: day (the default), week (ISO, from Monday), month, or an entity', {
      default: 'day',
    }),
    then_by: Type.Optional(DimensionSchema('Second level inside each group, different from group_by')),
    ...AnalyticsQuery,
  },
  { additionalProperties: false },
);

export type SummaryQueryT = Static<typeof SummaryQuery>;
export type ReportQueryT = Static<typeof ReportQuery>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Money = (description: string) => Type.Number({ description: `${description}, in \`currency\`` });

const measureFields = {
  leads: Count('Leads registered'),
  delivered: Count('Leads with status delivered'),
  rejected: Count('Leads with status rejected (no partner took them)'),
  duplicates: Count('Leads refused as duplicates'),
  failed: Count('Leads whose delivery failed (timeouts, errors)'),
  ftds: Count('First deposits'),
  conversion_rate: Type.Number({
    minimum: 0,
    description: 'ftds / delivered (0 when nothing was delivered); a ratio, not a percentage',
  }),
  flagged: Count(
    'Leads with any fraud flag (GET /api/quality/settings names them), counted on the registration day like leads',
  ),
  flagged_rate: Type.Number({
    minimum: 0,
    maximum: 1,
    description: 'flagged / leads (0 without leads); a ratio, not a percentage',
  }),
  revenue: Money('What partners pay'),
  cost: Money('What traffic providers are paid'),
  profit: Money('revenue − cost'),
};

export const Measures = Type.Object(measureFields, { title: 'AnalyticsMeasures' });

const RangeFields = {
  from: Type.String({ format: 'date-time', description: 'Start of the range (inclusive), UTC' }),
  to: Type.String({ format: 'date-time', description: 'End of the range (exclusive), UTC' }),
  timezone: Type.String(),
  date_type: Type.Union([Type.Literal('registration'), Type.Literal('ftd')]),
  currency: Type.String({ description: 'Currency of every amount' }),
};

export const Summary = Type.Object({ ...RangeFields, totals: Measures }, { title: 'AnalyticsSummary' });

const groupFields = {
  key: Type.Union([Type.String(), Type.Null()], {
    description:
      'Day YYYY-MM-DD, ISO week YYYY-Www, month YYYY-MM, country code, or the entity id; null: leads without one (partner: leads no partner took, labelled "Not taken by a partner"; their refusals are in getPartnerPerformance)',
  }),
  label: Type.String({
    description: 'For display: the name of the partner, provider, campaign or flow; the country name; the period',
  }),
  ...measureFields,
};

export const ReportGroup = Type.Object(groupFields, { title: 'AnalyticsGroup' });

export const ReportRow = Type.Object(
  {
    ...groupFields,
    children: Type.Optional(
      Type.Array(ReportGroup, { description: 'The then_by groups inside this one (only with then_by)' }),
    ),
  },
  { title: 'AnalyticsRow' },
);

export const Report = Type.Object(
  {
    ...RangeFields,
    group_by: DimensionSchema('As requested'),
    then_by: Type.Union([DimensionSchema('As requested'), Type.Null()]),
    totals: Measures,
    rows: Type.Array(ReportRow, {
      description:
        'Days, weeks and months in time order, every period of the range included (zeros when empty); other groups by leads, most first',
    }),
  },
  { title: 'AnalyticsReport' },
);
