import { Type, type Static } from 'typebox';
import { Nullable, NullableTimestamp } from '../../http/common-schemas.js';

// A partner's status pull, as data like its send integration: the request that lists its leads'
// statuses over a time window, where the answer carries each lead's id, status, FTD and
// revenue, how to page, how often, and what its status words mean.

const Path = (what: string) =>
  Type.String({
    maxLength: 200,
    pattern: '^[^\\s]*$',
    description: `Dot path in ${what} (e.g. data.items), empty: ${what === 'the answer' ? 'the answer itself' : 'not read'}`,
  });
const ItemPath = (what: string, optional = false) =>
  Type.String({
    minLength: optional ? 0 : 1,
    maxLength: 200,
    pattern: '^[^\\s]*$',
    description: `Dot path in each item to ${what}${optional ? ' (empty: not read)' : ''}`,
  });

const StatusWord = Type.Object(
  {
    sale_status: Type.String({ minLength: 1, maxLength: 100, description: "Leadgate's sale status for this word" }),
    ftd: Type.Optional(Type.Boolean({ description: 'This word means the lead deposited (FTD)', default: false })),
  },
  { additionalProperties: false },
);

const pullFields = {
  method: Type.Union([Type.Literal('GET'), Type.Literal('POST')], { default: 'GET' }),
  url: Type.String({
    minLength: 1,
    maxLength: 2000,
    description:
      'http(s) URL; {{from}}, {{to}} (the window, in date_format), {{page}} and {{page_size}} are filled in (URL-encoded) on each request',
  }),
  request_headers: Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4000 }), {
    maxProperties: 30,
    description:
      "Write-only, as the send integration's: answers show values masked; a masked value keeps the stored one while the URL keeps its scheme, host and port",
  }),
  body_template: Type.Union([Type.Record(Type.String({ maxLength: 100 }), Type.Unknown()), Type.Null()], {
    description: 'POST only: a JSON body, at most 32 levels deep; string values may hold the same placeholders',
  }),
  date_format: Type.Union([Type.Literal('iso'), Type.Literal('date'), Type.Literal('unix')], {
    default: 'iso',
    description:
      'How {{from}} and {{to}} are written: iso (2026-11-26T10:00:00Z), date (2026-11-26, UTC), unix (seconds)',
  }),
  list_path: Path('the answer'),
  lead_id_path: ItemPath("the partner's lead id (the partner_lead_id it answered at delivery)"),
  status_path: ItemPath('the status word', true),
  ftd_path: ItemPath('the FTD: a flag (true, 1, "yes") or a date-time (the FTD time)', true),
  revenue_path: ItemPath('the revenue (a number or decimal text, in USD)', true),
  paging: Type.Union(
    [
      Type.Object({ type: Type.Literal('none') }, { additionalProperties: false }),
      Type.Object(
        {
          type: Type.Literal('page'),
          first_page: Type.Integer({ format: 'int32', minimum: 0, maximum: 1, default: 1 }),
          page_size: Type.Integer({
            format: 'int32',
            minimum: 1,
            maximum: 1000,
            default: 100,
            description: 'A page with fewer items is the last',
          }),
          max_pages: Type.Integer({
            format: 'int32',
            minimum: 1,
            maximum: 100,
            default: 20,
            description: 'At most this many requests per run',
          }),
        },
        { additionalProperties: false },
      ),
    ],
    { description: 'none: one request per run; page: {{page}} counts up until a short or empty page' },
  ),
  interval_minutes: Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: 1440,
    description: 'How often it runs (at least every minute)',
  }),
  lookback_hours: Type.Integer({
    format: 'int32',
    minimum: 1,
    maximum: 2160,
    description: 'The window each run asks about: from now minus this, to now',
  }),
  timeout_ms: Type.Integer({
    format: 'int32',
    minimum: 1000,
    maximum: 60_000,
    default: 10_000,
    description: 'Per request',
  }),
  status_map: Type.Record(Type.String({ minLength: 1, maxLength: 100 }), StatusWord, {
    maxProperties: 200,
    description:
      "The partner's status words (matched ignoring case and spaces around) → Leadgate's sale status and FTD; a word not listed becomes the sale status as it is",
  }),
  // No default: left out, the stored value stays (a default would switch a running pull off).
  enabled: Type.Boolean({
    description:
      'Run on schedule. Can be turned on only once a dry run of these settings has been made (POST …/status-pull/run with dry_run: true), else 400 naming enabled: nothing changes a lead before it was previewed. Left out: as stored (false for a new pull).',
  }),
};

export const StatusPullInput = Type.Object(
  {
    ...pullFields,
    method: Type.Optional(pullFields.method),
    request_headers: Type.Optional(pullFields.request_headers),
    body_template: Type.Optional(pullFields.body_template),
    date_format: Type.Optional(pullFields.date_format),
    list_path: Type.Optional(pullFields.list_path),
    status_path: Type.Optional(pullFields.status_path),
    ftd_path: Type.Optional(pullFields.ftd_path),
    revenue_path: Type.Optional(pullFields.revenue_path),
    paging: Type.Optional(pullFields.paging),
    timeout_ms: Type.Optional(pullFields.timeout_ms),
    status_map: Type.Optional(pullFields.status_map),
    enabled: Type.Optional(pullFields.enabled),
  },
  { additionalProperties: false, title: 'StatusPullInput' },
);
export type StatusPullInput = Static<typeof StatusPullInput>;

export const StoredStatusPull = Type.Object(pullFields, { title: 'StatusPullConfig' });
export type StoredStatusPull = Static<typeof StoredStatusPull>;

export const StatusPullHealth = Type.Object(
  {
    last_run_at: NullableTimestamp,
    last_ok_at: NullableTimestamp,
    last_error: Nullable(Type.String()),
    last_updated: Type.Integer({ format: 'int32', description: 'Leads the last run changed' }),
    consecutive_failures: Type.Integer({ format: 'int32' }),
    next_run_at: NullableTimestamp,
  },
  { title: 'StatusPullHealth' },
);

export const StatusPull = Type.Object(
  {
    config: StoredStatusPull,
    health: StatusPullHealth,
    dry_run_seen: Type.Boolean({
      description:
        'A dry run of the stored settings has been made: they may run live (on schedule, or Pull now and apply)',
    }),
  },
  { title: 'StatusPull' },
);

export const PullChange = Type.Object(
  {
    partner_lead_id: Type.String(),
    lead_id: Type.String(),
    status_word: Nullable(Type.String()),
    sale_status: Type.Object({ from: Nullable(Type.String()), to: Nullable(Type.String()) }),
    ftd: Type.Boolean({ description: 'This run records the FTD' }),
    notes: Type.Array(Type.String()),
  },
  { title: 'StatusPullChange' },
);

export const PullRun = Type.Object(
  {
    dry_run: Type.Boolean(),
    ok: Type.Boolean(),
    error: Nullable(Type.String()),
    requests: Type.Array(
      Type.Object({
        method: Type.String(),
        url: Type.String(),
        http_status: Nullable(Type.Integer({ format: 'int32' })),
        items: Type.Integer({ format: 'int32' }),
        error: Nullable(Type.String()),
        response_excerpt: Nullable(Type.String({ description: 'The start of the answer (up to 2 KiB)' })),
      }),
      { description: 'Headers are not shown (they carry secrets)' },
    ),
    items_read: Type.Integer({ format: 'int32' }),
    changes: Type.Array(PullChange, { description: 'What changed (or, in a dry run, would change)' }),
    unmatched: Type.Array(Type.String(), {
      description: 'Partner lead ids no lead delivered to this partner carries (up to 50)',
    }),
    unchanged: Type.Integer({ format: 'int32' }),
  },
  { title: 'StatusPullRun' },
);
export type PullRun = Static<typeof PullRun>;
