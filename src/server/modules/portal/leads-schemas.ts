// The portal's data (issue 27): a provider's leads, their filters and its statistics.
import { Type } from 'typebox';
import { PageQuery } from '../../http/pagination.js';
import { DATE_INPUT_PATTERN } from '../analytics/range.js';
import { PROVIDER_LEAD_STATUSES } from '../leads/search.js';
import { PROVIDER_SALE_STATUSES } from '../traffic-providers/portal-settings.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(t: T, description?: string) =>
  Type.Union([t, Type.Null()], description ? { description } : {});
const Text = () => Type.String();
const SubIdParam = (n: number) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: `sub_id${n} equals this exactly` }));
const DateParam = (description: string) =>
  Type.Optional(Type.String({ maxLength: 40, pattern: DATE_INPUT_PATTERN, description }));

export const PortalLeadFilterQuery = {
  date_from: DateParam(
    'From this day (YYYY-MM-DD, in your time zone) or this instant (ISO 8601 with Z or an offset), inclusive',
  ),
  date_to: DateParam('Up to this day, inclusive (YYYY-MM-DD, in your time zone), or up to this instant, exclusive'),
  status: Type.Optional(
    Type.Array(Type.String({ maxLength: 300 }), {
      maxItems: 50,
      description: `Lead statuses (${PROVIDER_LEAD_STATUSES.join(', ')}); repeat the parameter or separate with commas`,
    }),
  ),
  country: Type.Optional(
    Type.Array(Type.String({ maxLength: 300 }), {
      maxItems: 50,
      description: 'ISO 3166-1 alpha-2 codes (any case); repeat the parameter or separate with commas',
    }),
  ),
  campaign_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only this campaign of yours' })),
  q: Type.Optional(
    Type.String({ minLength: 1, maxLength: 500, description: 'A lead id, or a value of any sub id (exact)' }),
  ),
  sub_id1: SubIdParam(1),
  sub_id2: SubIdParam(2),
  sub_id3: SubIdParam(3),
  sub_id4: SubIdParam(4),
  sub_id5: SubIdParam(5),
};

export const PortalLeadSearchQuery = Type.Object(
  { ...PageQuery, ...PortalLeadFilterQuery },
  { additionalProperties: false },
);
export const PortalLeadExportQuery = Type.Object(PortalLeadFilterQuery, { additionalProperties: false });

export const PortalLead = Type.Object(
  {
    id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    status: Type.Unsafe<(typeof PROVIDER_LEAD_STATUSES)[number]>({ type: 'string', enum: [...PROVIDER_LEAD_STATUSES] }),
    reason: Nullable(Text(), 'Why it was refused (rejected, duplicate, failed); null otherwise'),
    country: Type.String(),
    campaign_id: Nullable(Text()),
    campaign_name: Nullable(Text()),
    sub_id1: Nullable(Text()),
    sub_id2: Nullable(Text()),
    sub_id3: Nullable(Text()),
    sub_id4: Nullable(Text()),
    sub_id5: Nullable(Text()),
    sale_status: Type.Union([Type.Unsafe<string>({ type: 'string', enum: [...PROVIDER_SALE_STATUSES] }), Type.Null()], {
      description: 'The sale status in your words; null when not shown or not known yet',
    }),
    ftd_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the FTD happened; null when none is confirmed (FTDs show after the hold)',
    }),
    payout_cents: Type.Union([Type.Integer(), Type.Null()], {
      description: 'What the lead earns you; null when not shown',
    }),
    currency: Nullable(Text(), 'Currency of payout_cents; null when the payout is not shown'),
    email: Nullable(Text(), 'The email you sent, masked; null unless your account manager shows contacts'),
    phone: Nullable(Text(), 'The phone you sent, masked; null unless your account manager shows contacts'),
  },
  { title: 'PortalLead' },
);

export const STAT_GROUPS = [
  'day',
  'week',
  'month',
  'campaign',
  'country',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
] as const;
export type StatGroup = (typeof STAT_GROUPS)[number];

export const PortalStatsQuery = Type.Object(
  {
    group_by: Type.Unsafe<StatGroup>({
      type: 'string',
      enum: [...STAT_GROUPS],
      default: 'day',
      description: 'Rows per day, ISO week or month (in your time zone), per campaign, country or sub id value',
    }),
    date_from: DateParam('From this day (in your time zone) or instant, inclusive; default: 29 days before date_to'),
    date_to: DateParam('Up to this day (inclusive) or instant (exclusive); default: today. At most 366 days.'),
  },
  { additionalProperties: false },
);

const Measures = {
  leads: Type.Integer({ description: 'Leads received (by the day they arrived)' }),
  accepted: Type.Integer({ description: 'Of those, accepted (delivered)' }),
  ftds: Type.Integer({ description: 'Of those, with a confirmed FTD (after the hold)' }),
  conversion_rate: Type.Number({ description: 'ftds / leads (0 without leads)' }),
  payout_cents: Type.Union([Type.Integer(), Type.Null()], { description: 'Payout earned; null when not shown' }),
  currency: Type.Union([Type.String(), Type.Null()]),
};

export const PortalStats = Type.Object(
  {
    timezone: Type.String({ description: 'The IANA zone days, weeks and months are counted in' }),
    group_by: Type.String(),
    date_from: Type.String({ format: 'date-time', description: 'The range: from (inclusive)' }),
    date_to: Type.String({ format: 'date-time', description: 'to (exclusive)' }),
    ftd_hold_hours: Type.Integer({ description: 'FTDs count once this many hours have passed since they happened' }),
    rows: Type.Array(
      Type.Object({
        key: Type.Union([Type.String(), Type.Null()], {
          description: 'The day, week, month, campaign id, country or value',
        }),
        label: Type.String(),
        ...Measures,
      }),
    ),
    totals: Type.Object(Measures),
  },
  { title: 'PortalStats' },
);

export const PatchPortalMe = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'Your name' })),
    timezone: Type.Optional(
      Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone for dates and statistics' }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
