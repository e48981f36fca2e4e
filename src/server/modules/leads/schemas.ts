import { LeadVerdict } from '../routing/schemas.js';
import { Type } from 'typebox';
import { Nullable } from '../../http/common-schemas.js';
import { PageQuery } from '../../http/pagination.js';
import { DATE_TYPES, LEAD_STATUSES, MAX_IDS, type DateType } from './search.js';
import { FLAGS } from '../../db/lead-flags.js';

const FlagName = Type.Unsafe<(typeof FLAGS)[number]>({ type: 'string', enum: [...FLAGS] });

const NullableText = Nullable(Type.String());
const Instant = Type.String({ format: 'date-time' });
const NullableInstant = Nullable(Instant);

const EMAIL_NOTE = 'Masked (e.g. "j***@example.com") unless the caller holds `leads:contacts`';
const PHONE_NOTE = 'E.164; masked (e.g. "+49******67") unless the caller holds `leads:contacts`';

export const LeadStatusSchema = Type.Unsafe<(typeof LEAD_STATUSES)[number]>({
  type: 'string',
  enum: [...LEAD_STATUSES],
});

export const Lead = Type.Object(
  {
    id: Type.String(),
    created_at: Type.String({ format: 'date-time', description: 'Registration time' }),
    first_name: Type.String(),
    last_name: Type.String(),
    email: Type.String({ description: EMAIL_NOTE }),
    phone: Type.String({ description: PHONE_NOTE }),
    country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    ip: Type.String(),
    language: NullableText,
    funnel: NullableText,
    sub_id1: NullableText,
    sub_id2: NullableText,
    sub_id3: NullableText,
    sub_id4: NullableText,
    sub_id5: NullableText,
    traffic_provider_id: Type.String(),
    traffic_provider_name: Type.Union([Type.String(), Type.Null()], { description: 'null when the record is gone' }),
    campaign_id: NullableText,
    campaign_name: NullableText,
    flow_id: NullableText,
    flow_name: NullableText,
    partner_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'The partner the lead was delivered to; null while it is not delivered (every partner tried is in its attempts)',
    }),
    partner_name: NullableText,
    status: LeadStatusSchema,
    reason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was rejected, failed or is a duplicate' }),
    partner_lead_id: Type.Union([Type.String(), Type.Null()], { description: "The partner's own id for the lead" }),
    sale_status: Type.Union([Type.String(), Type.Null()], {
      description: "The partner's sale status, as the partner reports it",
    }),
    autologin_url: Type.Union([Type.String(), Type.Null()], { description: 'null when no partner returned one' }),
    delivered_at: NullableInstant,
    ftd_at: NullableInstant,
    is_ftd: Type.Boolean({ description: 'ftd_at is set' }),
    status_updated_at: Instant,
    payout: Type.Number({ description: 'What the lead costs (paid to the traffic provider), in USD' }),
    revenue: Type.Number({ description: 'What the partner pays for it, in USD' }),
    flags: Type.Array(FlagName, {
      description: 'The fraud flags intake raised (GET /api/quality/settings names them all); empty: none',
    }),
    quality_score: Nullable(
      Type.Integer({
        description: '0–100: 100 less the weights of its flags when it arrived; null for leads stored before scoring',
      }),
    ),
  },
  { title: 'Lead' },
);

export const LeadAttempt = Type.Object(
  {
    attempt_no: Type.Integer({ description: '1 for the first partner tried' }),
    partner_id: Type.String(),
    partner_name: NullableText,
    requested_at: Instant,
    duration_ms: Nullable(Type.Integer()),
    http_status: Type.Union([Type.Integer(), Type.Null()], {
      description: 'null when no answer came (timeout, connection error)',
    }),
    outcome: Type.Unsafe<'in_flight' | 'accepted' | 'rejected' | 'timeout' | 'error'>({
      type: 'string',
      enum: ['in_flight', 'accepted', 'rejected', 'timeout', 'error'],
      description: 'in_flight: the partner is being called now',
    }),
    reason: NullableText,
    response_excerpt: Type.Union([Type.String(), Type.Null()], {
      description:
        "The start of the partner's answer; the lead's contacts in it are masked unless the caller holds `leads:contacts`",
    }),
    injection_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The re-injection job that made this attempt (getInjection); null: fresh traffic or a redelivery',
    }),
  },
  { title: 'LeadAttempt' },
);

export const LeadStatusChange = Type.Object(
  {
    at: Type.String({ format: 'date-time' }),
    source: Type.Union([Type.Literal('postback'), Type.Literal('pull'), Type.Literal('operator')], {
      description: "postback: the partner's postback; pull: the partner's status API; operator: changed in Leadgate",
    }),
    sale_status: Type.Union([Type.String(), Type.Null()]),
    previous_sale_status: Type.Union([Type.String(), Type.Null()]),
    ftd_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'Set on the change that recorded the FTD',
    }),
  },
  { title: 'LeadStatusChange' },
);

const AutologinOpen = Type.Object(
  {
    at: Instant,
    ip: Type.String({ description: 'The address it was opened from; its last part masked without `leads:contacts`' }),
    user_agent: Type.String({
      description: 'The browser (at most 512 characters); only its first word without `leads:contacts`',
    }),
    ip_country: Type.Union([Type.String(), Type.Null()], {
      description:
        "The address's country (ISO 3166-1 alpha-2) from Leadgate's built-in IP-to-country database; null: not a public address, or none known",
    }),
    country_mismatch: Type.Boolean({
      description: "true: the address's country is known and is not the lead's country",
    }),
    redirected: Type.Boolean({ description: 'false: a single-use link opened again, answered without the link' }),
  },
  { title: 'AutologinOpen' },
);

const AutologinOpens = Type.Union(
  [
    Type.Object(
      {
        count: Type.Integer({ description: 'Every open, single-use refusals included' }),
        first_at: NullableInstant,
        last_at: NullableInstant,
        recent: Type.Array(AutologinOpen, { description: 'The latest 20 opens, newest first' }),
      },
      { title: 'AutologinOpens' },
    ),
    Type.Null(),
  ],
  {
    description:
      "Opens of the tracked link the traffic provider was given (the partner's track_autologin); null: no tracked link",
  },
);

export const LeadDetail = Type.Object(
  {
    ...Lead.properties,
    import_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The CSV import that stored the lead (getImport), or null',
    }),
    erased_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'When its contacts were erased (eraseContact): names, email, phone and IP replaced ("[erased]" as first name, the rest empty); null: never',
    }),
    autologin_opens: AutologinOpens,
    attempts: Type.Array(LeadAttempt, { description: 'Delivery attempts, first to last' }),
    status_history: Type.Array(LeadStatusChange, {
      description: 'Every sale-status change and the FTD, oldest first, with where each came from',
    }),
    verdicts: Type.Array(LeadVerdict, {
      description:
        "The flow's partners this lead was not offered to, and why (country, hours, a cap full with its numbers, paused, deleted, not tried), from its last delivery",
    }),
  },
  { title: 'LeadDetail' },
);

const Id = (what: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `Only leads of this ${what} (id)` }));
const Multi = (description: string) =>
  Type.Optional(Type.Array(Type.String({ maxLength: 300 }), { maxItems: 50, description }));
const SubIdParam = (n: number) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: `sub_id${n} equals this exactly` }));

/** The Leads table's filters, shared by search and export. */
export const LeadFilterQuery = {
  date_type: Type.Unsafe<DateType>({
    type: 'string',
    enum: [...DATE_TYPES],
    default: 'registration',
    description:
      'Which date the range applies to and the rows are sorted by (see `order`): registration (created_at), delivered (delivered_at), ' +
      'ftd (ftd_at) or status_updated. Except for registration, leads without that date are left out.',
  }),
  order: Type.Unsafe<'desc' | 'asc'>({
    type: 'string',
    enum: ['desc', 'asc'],
    default: 'desc',
    description: 'desc: newest first (by the date of `date_type`, then id); asc: oldest first. Both walk an index.',
  }),
  date_from: Type.Optional(
    Type.String({
      maxLength: 40,
      description:
        'From this day (YYYY-MM-DD, in `timezone`) or this instant (ISO 8601 date-time with Z or an offset), inclusive',
    }),
  ),
  date_to: Type.Optional(
    Type.String({
      maxLength: 40,
      description:
        'Up to this day, inclusive (YYYY-MM-DD, in `timezone`), or up to this instant, exclusive (ISO 8601 date-time with Z or an offset)',
    }),
  ),
  timezone: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "IANA time zone the dates are days in (e.g. Europe/Berlin); default: the operator's own",
    }),
  ),
  status: Multi(`Lead statuses (${LEAD_STATUSES.join(', ')}); repeat the parameter or separate with commas`),
  country: Multi('ISO 3166-1 alpha-2 codes (any case); repeat the parameter or separate with commas'),
  partner_id: Id('partner'),
  traffic_provider_id: Id('traffic provider'),
  campaign_id: Id('campaign'),
  flow_id: Id('flow'),
  is_ftd: Type.Optional(Type.Boolean({ description: 'true: only leads with an FTD; false: only leads without' })),
  autologin_opened: Type.Optional(
    Type.Boolean({
      description:
        "true: only leads whose tracked autologin link (the partner's track_autologin) was opened; false: only leads with a tracked link never opened",
    }),
  ),
  reinjected: Type.Optional(
    Type.Boolean({
      description:
        'true: only leads a re-injection job sent out again (/api/injections); false: only leads no job sent (fresh traffic)',
    }),
  ),
  sale_status: Type.Optional(
    Type.String({ minLength: 1, maxLength: 200, description: "The partner's sale status, exactly" }),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Free text: a lead id (exact), a name (prefix of the first or last name, or "first last"; case-insensitive) and, only for callers ' +
        'holding `leads:contacts`, an email address or phone number (exact; phone in any common notation). Without `leads:contacts` a ' +
        'q shaped like an email (any @) or a phone number is refused with 400 validation_failed naming the permission, instead of ' +
        'answering 0 leads (it could never match: a search must not confirm a contact the answers mask).',
    }),
  ),
  id: Type.Optional(
    Type.Array(Type.String({ maxLength: 8000 }), {
      maxItems: MAX_IDS,
      description: `Only these leads: up to ${MAX_IDS} lead ids, repeated or separated with commas (the dashboard exports a selection this way)`,
    }),
  ),
  flag: Multi(
    `Only leads with any of these fraud flags (${FLAGS.join(', ')}); repeat the parameter or separate with commas`,
  ),
  flagged: Type.Optional(
    Type.Boolean({ description: 'true: only leads with a fraud flag; false: only leads without' }),
  ),
  max_score: Type.Optional(
    Type.Integer({
      format: 'int32',
      minimum: 0,
      maximum: 100,
      description: 'Only leads whose quality score is at most this (scored leads only)',
    }),
  ),
  sub_id1: SubIdParam(1),
  sub_id2: SubIdParam(2),
  sub_id3: SubIdParam(3),
  sub_id4: SubIdParam(4),
  sub_id5: SubIdParam(5),
};

export const SearchQuery = Type.Object(
  {
    ...PageQuery,
    total: Type.Boolean({
      default: false,
      description:
        'true: the first page also counts the matches (up to 10,000; see `total`; countLeads gives the exact figure). Off by default: ' +
        'the count can cost more than the page, and a script paging through leads does not need it',
    }),
    ...LeadFilterQuery,
  },
  { additionalProperties: false },
);
export const ExportQuery = Type.Object({ ...LeadFilterQuery }, { additionalProperties: false });
/** The exact count takes the same filters as the export. */
export const CountQuery = ExportQuery;

export const LeadCount = Type.Object(
  { count: Type.Integer({ description: 'Every lead matching the filters, counted exactly' }) },
  { title: 'LeadCount' },
);

/** How far the search counts its matches (a bounded walk of the same index as the page). */
export const TOTAL_CAP = 10_000;

export const CSV_COLUMNS = Object.keys(Lead.properties) as (keyof typeof Lead.properties)[];

/** The search's page, with a bounded count of what matches. */
export const LeadPage = Type.Object(
  {
    data: Type.Array(Lead),
    next_cursor: Type.Union([Type.String(), Type.Null()], {
      description: 'Pass as cursor= for the next page; null on the last page',
    }),
    total: Type.Union(
      [
        Type.Object(
          {
            count: Type.Integer({
              description: `Leads matching the filters, counted up to ${TOTAL_CAP.toLocaleString('en-US')}`,
            }),
            exact: Type.Boolean({
              description: `false when there are more than ${TOTAL_CAP.toLocaleString('en-US')} (count is then the cap)`,
            }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'On the first page (no cursor) when asked for with total=true; else null' },
    ),
  },
  { title: 'LeadPage' },
);
