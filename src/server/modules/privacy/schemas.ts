import { Type } from 'typebox';
import { Timestamp } from '../../http/common-schemas.js';
import { Page, PageQuery } from '../../http/pagination.js';

export const ErasureBody = Type.Object(
  {
    email: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 320,
        description: 'The contact to erase: normalized as the blocklists do (NFKC, trimmed, lower case)',
      }),
    ),
    phone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 40,
        description: 'The contact to erase, in international format (+ and the country code): compared in E.164',
      }),
    ),
    blocklist: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          'Also list the contacts globally on the blocklist without storing them: an entry per contact whose value reads "erased subject" and whose key is the HMAC digest intake and CSV imports compare (a lead with that email or phone is then rejected)',
      }),
    ),
    note: Type.Optional(
      Type.String({
        maxLength: 1000,
        description: 'Why (a request reference); kept on the receipt, with any spelling of the contacts erased',
      }),
    ),
  },
  { additionalProperties: false, title: 'ErasureRequest' },
);

const Counts = Type.Record(Type.String(), Type.Integer({ format: 'int32' }), {
  description:
    'Rows changed per table (leads, lead_attempts, lead_status_history, events, event_deliveries, event_delivery_tries, ' +
    'audit_log, imports, injection_jobs, injection_items, injection_rules, blocklist_entries, partner_status_pulls, ' +
    'provider_log_pending), CSV import rows ' +
    'blanked (import_rows) and bad-row records deleted (import_errors), and rows deleted: import_keys, login_failures, ' +
    'lead_velocity, intake_requests, blocklist_entries (entries of these very values); autologin_opens: opens of the ' +
    'erased leads whose address and user agent were cleared; blocklisted (with blocklist: true): the entries added',
});

const erasureFields = {
  id: Type.String(),
  created_at: Timestamp,
  created_by: Type.Union([Type.String(), Type.Null()], { description: 'The operator who erased' }),
  created_by_email: Type.Union([Type.String(), Type.Null()]),
  subject: Type.String({ description: 'The contacts asked for, masked ("j***@example.com, +49*********67")' }),
  note: Type.Union([Type.String(), Type.Null()]),
  counts: Counts,
  lead_ids: Type.Array(Type.String(), { description: 'The leads erased' }),
};

export const Erasure = Type.Object(erasureFields, { title: 'Erasure' });

export const ErasureDone = Type.Object(
  {
    ...erasureFields,
    wal_truncated: Type.Union([Type.Boolean(), Type.Null()], {
      description:
        "SQLite: whether the write-ahead log was checkpointed into the database file and truncated at once (false: a reader still held it; it is checkpointed later). null on PostgreSQL, whose old row versions go at the table's next VACUUM",
    }),
  },
  { title: 'ErasureReceipt' },
);

export const ErasureList = Page(Erasure, 'ErasurePage');

export const ContactViewQuery = Type.Object(
  {
    ...PageQuery,
    operator_id: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, description: 'Only views by this operator' }),
    ),
    lead_id: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only views of this lead' })),
  },
  { additionalProperties: false },
);

export const ErasureQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const ContactView = Type.Object(
  {
    id: Type.String(),
    at: Timestamp,
    operator_id: Type.String(),
    operator_email: Type.String(),
    via: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
    ip: Type.Union([Type.String(), Type.Null()]),
    kind: Type.Union([Type.Literal('lead'), Type.Literal('export')], {
      description: "lead: GET /api/leads/{id} (or a redelivery's answer); export: GET /api/leads/export",
    }),
    lead_id: Type.Union([Type.String(), Type.Null()]),
    export_filter: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: "An export's query parameters, anything shaped like an email or a phone masked",
    }),
  },
  { title: 'ContactView' },
);

export const ContactViewList = Page(ContactView, 'ContactViewPage');

const Days = (what: string) =>
  Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 3650 }), Type.Null()], {
    description: `${what} (1–3650 days); null: kept for ever`,
  });

export const RetentionBody = Type.Object(
  {
    contacts_days: Days(
      'Purge the names, email, phone and IP of leads received more than this many days ago, keeping keyed digests of the email and phone so the duplicate checks still find them',
    ),
    leads_days: Days('Delete leads received more than this many days ago; the reports keep counting them'),
  },
  { additionalProperties: false, title: 'RetentionSettings' },
);

const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

export const RetentionRun = Type.Object(
  {
    id: Type.String(),
    started_at: Timestamp,
    updated_at: Type.Union([Timestamp], { description: 'When its counts last moved (one batch)' }),
    finished_at: NullableTimestamp,
    state: Type.Union([Type.Literal('running'), Type.Literal('done'), Type.Literal('failed')]),
    contacts_before: Type.Union([Timestamp, Type.Null()], {
      description: 'Contacts of leads received before this were purged; null: contacts were not purged',
    }),
    leads_before: Type.Union([Timestamp, Type.Null()], {
      description: 'Leads received before this were deleted; null: no lead was deleted',
    }),
    contacts_purged: Type.Integer({ format: 'int32' }),
    leads_deleted: Type.Integer({ format: 'int32' }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'RetentionRun' },
);

export const Retention = Type.Object(
  {
    contacts_days: RetentionBody.properties.contacts_days,
    leads_days: RetentionBody.properties.leads_days,
    interval_seconds: Type.Union([Type.Integer({ format: 'int32', minimum: 1 }), Type.Null()], {
      description:
        "How often this server's job applies the settings (RETENTION_INTERVAL_MS); null: never on this server",
    }),
    runs: Type.Array(RetentionRun, { description: 'The latest runs that had work, newest first (at most 10)' }),
  },
  { title: 'Retention' },
);
