import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

// Timestamps are ISO 8601 UTC strings ("2026-11-21T10:00:00.000Z") on both engines: they sort
// as text, compare as text and need no per-engine conversion. JSON columns are text.

export interface RolesTable {
  id: string;
  name: string;
  description: string;
  permissions: string; // JSON array of module:action
  builtin: number; // 1 for the built-in admin role
  /** JSON array of traffic provider ids the role's operators are limited to; null: all. */
  scope_traffic_provider_ids: string | null;
  /** JSON array of partner ids the role's operators are limited to; null: all. */
  scope_partner_ids: string | null;
  created_at: string;
  updated_at: string;
}

export interface OperatorsTable {
  id: string;
  email: string;
  name: string;
  password_hash: string;
  role_id: string;
  status: 'active' | 'disabled';
  timezone: string;
  created_at: string;
  updated_at: string;
  totp_secret: string | null; // base32; null: two-factor sign-in is off
  totp_pending_secret: string | null; // offered by enrolment, awaiting its confirming code
  totp_last_step: number | null; // time step of the last accepted code (no replay)
}

export interface RecoveryCodesTable {
  id: string;
  operator_id: string;
  code_hash: string; // SHA-256 hex of the normalized code
  created_at: string;
  used_at: string | null;
}

export interface SessionsTable {
  id: string; // the token's public lookup id
  secret_hash: string;
  operator_id: string;
  created_at: string;
  last_seen_at: string;
  ip: string;
  user_agent: string;
}

export interface ApiKeysTable {
  id: string; // the key's public lookup id
  operator_id: string;
  name: string;
  scopes: string; // JSON array of module:action
  secret_hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface AuditLogTable {
  id: string;
  at: string;
  actor_id: string | null;
  actor_email: string | null;
  via: 'session' | 'api_key' | 'system' | 'anonymous';
  /** An operator (or the system, or no one yet), or a traffic provider's portal user. */
  actor_kind: Generated<'operator' | 'provider_user'>;
  ip: string | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  details: string; // JSON object
}

export interface LoginFailuresTable {
  id: string;
  at: string;
  ip: string;
  email: string;
}

/** One row (id 1): bumped by trigger on every change that can narrow access (auth/cache.ts). */
export interface AuthStateTable {
  id: number;
  generation: number | string; // bigint: PostgreSQL answers it as text
}

export interface SettingsTable {
  key: string;
  value: string; // JSON
  updated_at: string;
}

export interface PartnersTable {
  id: string;
  name: string;
  status: 'active' | 'paused';
  countries: string; // JSON array; [] = all
  working_hours: string | null; // JSON {timezone, days, from, to}
  daily_cap: number | null;
  hourly_cap: number | null;
  total_cap: number | null;
  /** JSON StoredPrice (distribution/prices.ts): what the partner pays; null: no deal. */
  deal: string | null;
  integration: string; // JSON
  postback_token_id: string;
  postback_token_hash: string;
  /** Pause the partner after this many failed calls in a row; null: never (the default). */
  pause_after_failures: number | null;
  /** Failed calls in a row (kept by a trigger on lead_attempts). */
  consecutive_failures: Generated<number>;
  /** 0/1: answer providers a tracked link (/go/{token}) instead of the autologin URL (modules/autologin). */
  track_autologin: Generated<number>;
  /** 0/1: a tracked link redirects once. */
  autologin_single_use: Generated<number>;
  /** JSON StoredQualityRule (distribution/quality-rule.ts): the flags it refuses, the lowest score it takes. */
  quality_rule: Generated<string>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface TrafficProvidersTable {
  id: string;
  name: string;
  status: 'active' | 'paused';
  token_id: string;
  token_hash: string;
  allowed_ips: string; // JSON array of CIDRs; [] = any
  duplicate_policy: string; // JSON
  /** JSON StoredVelocityPolicy (modules/quality/velocity.ts): limits per IP, phone, email domain. */
  velocity_policy: Generated<string>;
  /** JSON StoredReviewRule (modules/quality/review-rule.ts): which leads are held for review. */
  review_rule: Generated<string>;
  /** Alert when no lead came for this many hours; null: never. */
  silent_after_hours: number | null;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** What its portal shows (modules/traffic-providers/portal-settings.ts); 0/1 flags. */
  portal_enabled: Generated<number>;
  portal_sale_status: Generated<number>;
  portal_payout: Generated<number>;
  portal_contacts: Generated<number>;
  /** An FTD reaches the provider (portal, log, postbacks) this many hours after it was recorded. */
  ftd_hold_hours: Generated<number>;
  /** JSON {"partner's word (lower case)": "provider word"}: the sale statuses the provider is shown. */
  sale_status_map: Generated<string>;
}

/** A traffic provider's user (issue 27): signs in to the portal, never to the dashboard. */
export interface ProviderUsersTable {
  id: string;
  traffic_provider_id: string;
  email: string;
  name: string;
  password_hash: string | null; // null until the invitation is accepted
  status: 'invited' | 'active' | 'disabled';
  invitation_hash: string | null;
  invitation_expires_at: string | null;
  timezone: Generated<string>;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_last_step: number | null;
  created_at: string;
  updated_at: string;
  last_login_at: string | null;
}

export interface ProviderSessionsTable {
  id: string;
  secret_hash: string;
  traffic_provider_id: string;
  /** null for "View as provider" (viewer_operator_id set instead). */
  provider_user_id: string | null;
  created_at: string;
  last_seen_at: string;
  ip: string;
  user_agent: string;
  /** "View as provider": the operator reading the portal (read only); null: the provider user itself. */
  viewer_operator_id: string | null;
}

export interface ProviderApiKeysTable {
  id: string;
  provider_user_id: string;
  name: string;
  scopes: string; // JSON array: portal:view, portal:edit
  secret_hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface FlowsTable {
  id: string;
  name: string;
  status: 'active' | 'paused';
  max_attempts: number;
  /** JSON StoredReviewRule (modules/quality/review-rule.ts): which leads are held for review. */
  review_rule: Generated<string>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

export interface FlowTargetsTable {
  id: string;
  flow_id: string;
  partner_id: string;
  position: number;
  priority: number;
  weight: number;
  daily_cap: number | null;
  hourly_cap: number | null;
  total_cap: number | null;
  /** JSON {"DE": 50}: daily caps per lead country. */
  country_caps: Generated<string>;
  cap_counts: Generated<CapCounts>;
  countries: string; // JSON array
  schedule: string | null; // JSON working-hours override
}

/** What a flow target's caps count: leads delivered, or FTDs recorded. */
export type CapCounts = 'deliveries' | 'ftds';

export interface CampaignsTable {
  id: string;
  name: string;
  status: 'active' | 'paused';
  traffic_provider_id: string;
  flow_id: string | null;
  countries: string; // JSON array
  payout: string; // JSON {model, amount_cents, currency}
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}

/** held: kept for an operator's review (modules/quality/review-*.ts), answered `pending` to its provider. */
export type LeadStatus = 'new' | 'pending' | 'held' | 'delivered' | 'rejected' | 'duplicate' | 'failed';

/** A lead's velocity keys, kept while any provider's window could count them (modules/quality/velocity.ts). */
export interface LeadVelocityTable {
  lead_id: string;
  traffic_provider_id: string;
  key: string;
  created_at: string;
}

/** How many blocklist entries have each shape: a kind, or an IP family and prefix ('ip4/24'). */
export interface BlocklistShapesTable {
  shape: string;
  entries: number;
}

/** A value leads must not carry (modules/quality): global, or one traffic provider's. */
export interface BlocklistEntriesTable {
  id: string;
  kind: 'email' | 'email_domain' | 'phone' | 'ip' | 'sub_id';
  value: string;
  match_key: string;
  traffic_provider_id: string | null;
  expires_at: string | null;
  note: string | null;
  created_by: string | null;
  created_at: string;
}

export interface LeadsTable {
  id: string;
  created_at: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  country: string;
  ip: string;
  language: string | null;
  funnel: string | null;
  sub_id1: string | null;
  sub_id2: string | null;
  sub_id3: string | null;
  sub_id4: string | null;
  sub_id5: string | null;
  traffic_provider_id: string;
  campaign_id: string | null;
  flow_id: string | null;
  partner_id: string | null;
  status: LeadStatus;
  reason: string | null;
  partner_lead_id: string | null;
  sale_status: string | null;
  autologin_url: string | null;
  delivered_at: string | null;
  ftd_at: string | null;
  status_updated_at: string;
  cost_cents: number;
  revenue_cents: number;
  /** JSON [{partner_id, verdict, reason, cap?}]: the flow's candidates not offered this lead, and why. */
  verdicts: string | null;
  /** The FTD rate guaranteed (basis points) by the partner's CPL deal when the lead was delivered. */
  crg_bp: number | null;
  /** While pending: until when one process owns the delivery (see the distribution migration). */
  lease_until: string | null;
  /** The CSV import that stored this lead (modules/imports), or null. */
  import_id: string | null;
  /** Fraud flags found at intake, a bit mask (modules/quality/flags.ts); 0: none. */
  flags: Generated<number>;
  /** 0–100 from the flags and the weights when it arrived; null: stored before scoring existed. */
  quality_score: number | null;
  /** When its contacts were erased (modules/privacy): names, email, phone and IP replaced; null: never. */
  erased_at: Generated<string | null>;
  /** After the retention purged its contacts: keyed digests of its email and phone (privacy/contact-digests.ts), for duplicate checks; else null. */
  email_digest: Generated<string | null>;
  phone_digest: Generated<string | null>;
}

/** A lead's own fields, as a traffic provider sends them (normalized) and a partner receives them. */
export type LeadFields = Pick<
  LeadsTable,
  | 'first_name'
  | 'last_name'
  | 'email'
  | 'phone'
  | 'country'
  | 'ip'
  | 'language'
  | 'funnel'
  | 'sub_id1'
  | 'sub_id2'
  | 'sub_id3'
  | 'sub_id4'
  | 'sub_id5'
>;
export type AttemptOutcome = 'in_flight' | 'accepted' | 'rejected' | 'timeout' | 'error';
export interface LeadAttemptsTable {
  id: string;
  lead_id: string;
  partner_id: string;
  attempt_no: number;
  requested_at: string;
  duration_ms: number | null;
  http_status: number | null;
  /** in_flight: the partner is being called (or the process died while it was). */
  outcome: AttemptOutcome;
  reason: string | null;
  response_excerpt: string | null;
  /** The re-injection job that made this attempt (modules/injections), or null. */
  injection_id: string | null;
}

/** Folded calls and tracked links by bucket (hour 'YYYY-MM-DDTHH' or UTC day 'YYYY-MM-DD'): modules/analytics/attempt-folds.ts. */
export interface AttemptStatsTable {
  bucket: string;
  partner_id: string;
  traffic_provider_id: string;
  origin: 'fresh' | 'reinjected';
  attempts: number;
  accepted: number;
  rejected: number;
  failed: number;
  duration_sum: number;
  timed: number;
  links: number;
  opened: number;
}

/** Folded refusal reasons, as partner performance shows them (contacts as placeholders). */
export interface AttemptReasonsTable {
  bucket: string;
  partner_id: string;
  traffic_provider_id: string;
  reason: string;
  n: number;
}

/** A bucket the rollups above hold exactly; the triggers delete it on any change in it. */
export interface AttemptFoldsTable {
  bucket: string;
  folded_at: string;
}

export type InjectionState = 'scheduled' | 'running' | 'paused' | 'cancelled' | 'done';
export type InjectionItemState = 'pending' | 'sent' | 'delivered' | 'refused' | 'skipped';

/** A re-injection job (modules/injections). */
export interface InjectionJobsTable {
  id: string;
  state: InjectionState;
  flow_id: string | null;
  partner_ids: string | null; // JSON array
  per_minute: number;
  start_at: string | null;
  window: string | null; // JSON {time_zone, from, to}
  reoffer: number;
  selection: string; // JSON
  total: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  tokens: number;
  tokens_at: string | null;
  lease_holder: string | null;
  lease_until: string | null;
  /** The recurring rule whose run made this job (modules/injection-rules), or null. */
  rule_id: string | null;
}

/** A recurring re-injection rule (modules/injection-rules). */
export interface InjectionRulesTable {
  id: string;
  name: string;
  filter: string; // JSON: the Leads filters with last_days
  flow_id: string | null;
  partner_ids: string | null; // JSON array
  per_minute: number;
  window: string | null; // JSON {time_zone, from, to}
  reoffer: number;
  schedule: string; // JSON {time_zone, at, days}
  enabled: number;
  armed_at: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

/** One scheduled occurrence of a rule: the job it made or why it was skipped (one per occurrence). */
export interface InjectionRuleRunsTable {
  rule_id: string;
  occurrence_at: string;
  job_id: string | null;
  skipped: string | null;
  at: string;
}

/** One lead of a re-injection job, chosen when the job was created. */
export interface InjectionItemsTable {
  job_id: string;
  lead_id: string;
  state: InjectionItemState;
  reason: string | null;
  partner_id: string | null;
  at: string | null;
}

export type ImportState =
  'uploading' | 'uploaded' | 'validating' | 'validated' | 'importing' | 'done' | 'cancelled' | 'failed';

/** A CSV import (modules/imports). */
export interface ImportsTable {
  id: string;
  state: ImportState;
  name: string | null;
  bytes: number;
  rows: number;
  columns: string; // JSON array
  header_hash: string;
  mapping: string | null; // JSON {lead field: column}
  traffic_provider_id: string | null;
  campaign_id: string | null;
  mode: 'store' | 'route' | null;
  route: string | null; // JSON {flow_id | partner_ids, per_minute}
  injection_id: string | null;
  next_seq: number;
  rows_done: number;
  good: number;
  bad: number;
  duplicates: number;
  imported: number;
  dry_run: string | null; // JSON
  error: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
  lease_holder: string | null;
  lease_until: string | null;
}

export interface ImportChunksTable {
  import_id: string;
  seq: number;
  first_row: number;
  row_count: number;
  data: string; // JSON rows of cells
}

export interface ImportErrorsTable {
  import_id: string;
  row: number;
  field: string;
  column_name: string | null;
  reason: string;
  value: string | null;
}

export interface ImportKeysTable {
  import_id: string;
  key: string;
  row: number;
}

export interface ImportMappingsTable {
  header_hash: string;
  mapping: string;
  updated_at: string;
}

export interface CapCountersTable {
  scope: string; // distribution/caps.ts: 'partner:<id>' | 'target:<id>' [':ftds'] [':<country>']
  period: string; // 'total' | 'YYYY-MM-DD' (local day) | 'YYYY-MM-DDTHH' (local hour)
  used: number;
  // What the counter counts, for the cap alerts and the cap usage view (null on rows from before).
  partner_id: string | null;
  flow_id: string | null;
  cap_kind: string | null;
  country: string | null;
  counts: CapCounts | null;
  /** The cap at the last change of used. */
  cap: number | null;
}
export interface IntakeRequestsTable {
  traffic_provider_id: string;
  idempotency_key: string;
  request_hash: string;
  lead_id: string;
  created_at: string;
}
/** The outbox (migration 20261126T000000Z_event_outbox). ids are integers (bigint strings from pg). */
export interface EventsTable {
  id: Generated<number | string>;
  type: string;
  occurred_at: string;
  lead_id: string | null;
  partner_id: string | null;
  traffic_provider_id: string | null;
  campaign_id: string | null;
  data: string; // JSON
  dedupe_key: string | null;
  /** 0 until a dispatcher has made its deliveries. */
  fanned: Generated<number>;
}
export type DestinationKind = 'webhook' | 'postback';
export interface EventSubscriptionsTable {
  event_type: string;
  destination_kind: DestinationKind;
  destination_id: string;
  traffic_provider_id: string | null;
  campaign_id: string | null;
}
export type DeliveryState = 'pending' | 'delivered' | 'failed' | 'cancelled';
export interface EventDeliveriesTable {
  id: Generated<number | string>;
  event_id: number | string;
  destination_kind: DestinationKind;
  destination_id: string;
  lead_id: string | null;
  state: DeliveryState;
  attempts: number;
  created_at: string;
  next_attempt_at: string;
  /** A pending delivery not sent by then is given up (failed). */
  expires_at: string;
  lease_until: string | null;
  lease_token: string | null;
  last_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
}
export interface EventDeliveryTriesTable {
  id: Generated<number | string>;
  delivery_id: number | string;
  attempted_at: string;
  duration_ms: number;
  http_status: number | null;
  ok: boolean | number;
  error: string | null;
  response_excerpt: string | null;
}
export interface WebhooksTable {
  id: string;
  name: string;
  url: string;
  format: 'json' | 'slack' | 'telegram';
  telegram_chat_id: string | null;
  event_types: string; // JSON array
  /** whsec_…: used to sign, so kept (never shown after creation or rotation). */
  secret: string;
  status: 'active' | 'disabled';
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  /** The operator it sends as: events of a type the owner may not read are not sent; null: no owner, nothing sent. */
  owner_id: string | null;
}
export interface ProviderPostbacksTable {
  id: string;
  traffic_provider_id: string;
  /** null: every campaign of the provider without its own postback for this event. */
  campaign_id: string | null;
  event_type: string;
  url: string;
  created_at: string;
}
export type ConversionSource = 'postback' | 'pull' | 'operator';
export interface LeadStatusHistoryTable {
  id: Generated<number | string>;
  lead_id: string;
  at: string;
  source: ConversionSource;
  sale_status: string | null;
  previous_sale_status: string | null;
  /** Set on the change that recorded the lead's FTD. */
  ftd_at: string | null;
}
export interface PartnerStatusPullsTable {
  partner_id: string;
  config: string; // JSON (modules/status-pull/schemas.ts)
  next_run_at: string;
  lease_until: string | null;
  last_run_at: string | null;
  last_ok_at: string | null;
  last_error: string | null;
  /** Leads the last run changed. */
  last_updated: number;
  consecutive_failures: number;
  updated_at: string;
  /** The fingerprint of the settings the last dry run used (status-pull/service.ts); null: none yet. */
  previewed: string | null;
}
export interface NotificationReadsTable {
  operator_id: string;
  last_read_event_id: number | string;
}
/** A background job's lease (jobs/lease.ts): who runs it now, until when. */
export interface JobLeasesTable {
  name: string;
  holder: string | null;
  lease_until: string | null;
}

/** A fact waiting to be chained into its provider's log (modules/provider-log/). */
export interface ProviderLogPendingTable {
  id: Generated<number | string>;
  traffic_provider_id: string;
  lead_id: string;
  kind: string;
  data: string; // JSON
  recorded_at: string;
  visible_at: string;
}
/** One entry of a provider's hash chain; never updated. */
export interface ProviderLogTable {
  traffic_provider_id: string;
  seq: number;
  at: string;
  lead_id: string;
  kind: string;
  data: string; // JSON, canonical
  prev_hash: string;
  hash: string;
}
/** A signed chain head. */
export interface ProviderLogCheckpointsTable {
  traffic_provider_id: string;
  seq: number;
  hash: string;
  signed_at: string;
  signature: string;
  key_id: string;
}

/** A tracked autologin link (modules/autologin): stored by the SHA-256 of its token only. */
export interface AutologinLinksTable {
  token_hash: string;
  lead_id: string;
  partner_id: string;
  single_use: number;
  created_at: string;
  opens: Generated<number>;
  first_open_at: string | null;
  last_open_at: string | null;
}

export interface AutologinOpensTable {
  id: string;
  lead_id: string;
  opened_at: string;
  ip: string;
  user_agent: string;
  /** The address's country when it was opened (geo/ip-country.ts); null: not a public address, or none known. */
  ip_country: string | null;
  redirected: number;
}

/** The receipt of an erasure by email or phone (modules/privacy): the subject only masked. */
export interface PrivacyErasuresTable {
  id: string;
  created_at: string;
  created_by: string | null;
  created_by_email: string | null;
  subject: string; // masked: "j***@example.com", "+49*********67"
  note: string | null;
  counts: string; // JSON {kind: number}
  lead_ids: string; // JSON array
}

/** One run of the retention that had work (modules/privacy/retention-*.ts), with its progress. */
export interface RetentionRunsTable {
  id: string;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
  state: 'running' | 'done' | 'failed';
  /** Contacts of leads received before this were purged; null: not asked. */
  contacts_before: string | null;
  /** Leads received before this were deleted; null: not asked. */
  leads_before: string | null;
  contacts_purged: Generated<number>;
  leads_deleted: Generated<number>;
  error: string | null;
}

/** One read of contacts unmasked (modules/privacy): a lead's detail, or an export with contacts. */
export interface ContactViewsTable {
  id: string;
  at: string;
  operator_id: string;
  operator_email: string;
  via: 'session' | 'api_key';
  ip: string | null;
  kind: 'lead' | 'export';
  lead_id: string | null;
  export_filter: string | null; // JSON, contacts masked
}

export interface Database {
  roles: RolesTable;
  operators: OperatorsTable;
  sessions: SessionsTable;
  recovery_codes: RecoveryCodesTable;
  api_keys: ApiKeysTable;
  audit_log: AuditLogTable;
  login_failures: LoginFailuresTable;
  settings: SettingsTable;
  auth_state: AuthStateTable;
  partners: PartnersTable;
  traffic_providers: TrafficProvidersTable;
  flows: FlowsTable;
  flow_targets: FlowTargetsTable;
  campaigns: CampaignsTable;
  leads: LeadsTable;
  autologin_links: AutologinLinksTable;
  autologin_opens: AutologinOpensTable;
  lead_attempts: LeadAttemptsTable;
  attempt_stats_hourly: AttemptStatsTable;
  attempt_stats_daily: AttemptStatsTable;
  attempt_reasons_hourly: AttemptReasonsTable;
  attempt_reasons_daily: AttemptReasonsTable;
  attempt_folds: AttemptFoldsTable;
  lead_stats_folds: { day: string; folded_at: string };
  injection_jobs: InjectionJobsTable;
  injection_items: InjectionItemsTable;
  injection_rules: InjectionRulesTable;
  injection_rule_runs: InjectionRuleRunsTable;
  imports: ImportsTable;
  import_chunks: ImportChunksTable;
  import_errors: ImportErrorsTable;
  import_keys: ImportKeysTable;
  import_mappings: ImportMappingsTable;
  blocklist_entries: BlocklistEntriesTable;
  blocklist_shapes: BlocklistShapesTable;
  lead_velocity: LeadVelocityTable;
  cap_counters: CapCountersTable;
  intake_requests: IntakeRequestsTable;
  events: EventsTable;
  event_subscriptions: EventSubscriptionsTable;
  event_deliveries: EventDeliveriesTable;
  event_delivery_tries: EventDeliveryTriesTable;
  webhooks: WebhooksTable;
  notification_reads: NotificationReadsTable;
  provider_postbacks: ProviderPostbacksTable;
  lead_status_history: LeadStatusHistoryTable;
  partner_status_pulls: PartnerStatusPullsTable;
  job_leases: JobLeasesTable;
  provider_users: ProviderUsersTable;
  provider_sessions: ProviderSessionsTable;
  provider_api_keys: ProviderApiKeysTable;
  provider_log_pending: ProviderLogPendingTable;
  provider_log: ProviderLogTable;
  provider_log_checkpoints: ProviderLogCheckpointsTable;
  privacy_erasures: PrivacyErasuresTable;
  contact_views: ContactViewsTable;
  retention_runs: RetentionRunsTable;
}

export type Role = Selectable<RolesTable>;
export type Operator = Selectable<OperatorsTable>;
export type NewOperator = Insertable<OperatorsTable>;
export type OperatorUpdate = Updateable<OperatorsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
