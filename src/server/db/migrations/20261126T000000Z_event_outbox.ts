import { sql, PostgresAdapter, type Kysely } from 'kysely';

// The event outbox (issue 15). An event is written by a trigger in the same statement as the
// change it tells of, so every writer is covered on both engines, including PostgreSQL's
// single-statement intake and answer, and a change that rolls back takes its event with it:
//
// - leads: received (insert), delivered / rejected (and duplicate) / failed (status), FTD
//   (ftd_at set), sale status changed. A lead event is written only when some subscription
//   wants it, so an installation with no webhook or postback pays one index probe per change;
// - cap_counters: a partner's cap (daily or total, or a flow target's daily cap) nearly full
//   (90 %) and full, once per cap and period (events.dedupe_key);
// - lead_attempts: a partner failing (5 failed calls in a row), and paused after its
//   pause_after_failures (audited) when set;
// - application code (events/emit.ts) for what no row change tells: a webhook disabled, a
//   status pull failing, a traffic provider silent.
//
// Dispatchers (events/dispatcher.ts) fan events out to their destinations (event_subscriptions:
// webhooks, traffic providers' postbacks) as event_deliveries rows, many events per transaction,
// then claim deliveries with leases, in order per lead and destination. Fanning out in the
// trigger cost every lead's intake 80 % more on SQLite (bench/RESULTS.md); a trigger now writes
// the event alone.

const ALERT_NOW = { sqlite: `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`, postgres: `to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` };
type Engine = 'sqlite' | 'postgres';

/** The lead's state an event carries: no contacts, nothing a partner's answer said. */
function leadSnapshot(engine: Engine, previousSaleStatus: string): string {
  const fields: [string, string][] = [
    ['status', 'new.status'],
    ['sale_status', 'new.sale_status'],
    ['previous_sale_status', previousSaleStatus],
    ['ftd_at', 'new.ftd_at'],
    ['country', 'new.country'],
    ['traffic_provider_id', 'new.traffic_provider_id'],
    ['campaign_id', 'new.campaign_id'],
    ['flow_id', 'new.flow_id'],
    ['partner_id', 'new.partner_id'],
    ...[1, 2, 3, 4, 5].map((i): [string, string] => [`sub_id${i}`, `new.sub_id${i}`]),
    ['cost_cents', 'new.cost_cents'],
    ['revenue_cents', 'new.revenue_cents'],
    ['created_at', 'new.created_at'],
    ['delivered_at', 'new.delivered_at'],
  ];
  const args = fields.map(([k, v]) => `'${k}', ${v}`).join(', ');
  return engine === 'postgres' ? `json_build_object(${args})::text` : `json_object(${args})`;
}

const wanted = (type: string) =>
  `exists (select 1 from event_subscriptions s where s.event_type = ${type} ` +
  `and (s.traffic_provider_id is null or s.traffic_provider_id = new.traffic_provider_id) and (s.campaign_id is null or s.campaign_id = new.campaign_id))`;

/**
 * One lead event, written when `cond` holds and someone subscribes to it. `type` is an SQL
 * expression (a literal, or a CASE on the status: one statement for every status event, since
 * every statement a trigger runs costs each lead, most on PostgreSQL).
 */
function leadEvent(engine: Engine, type: string, occurredAt: string, cond: string, previousSaleStatus = 'null'): string {
  return (
    `insert into events (type, occurred_at, lead_id, partner_id, traffic_provider_id, campaign_id, data) ` +
    `select t.type, ${occurredAt}, new.id, new.partner_id, new.traffic_provider_id, new.campaign_id, ${leadSnapshot(engine, previousSaleStatus)} ` +
    `from (select ${type} as type) t where t.type is not null and ${cond} and ${wanted('t.type')}`
  );
}

/** The event of a lead's status: delivered, rejected (a duplicate too), failed; null for the others. */
const STATUS_EVENT =
  "(case new.status when 'delivered' then 'lead.delivered' when 'rejected' then 'lead.rejected' when 'duplicate' then 'lead.rejected' when 'failed' then 'lead.failed' end)";

function leadInsertBody(engine: Engine): string[] {
  return [
    leadEvent(engine, "'lead.received'", 'new.created_at', '1 = 1'),
    // Intake may store a lead already decided (a duplicate, or refused by its flow).
    leadEvent(engine, STATUS_EVENT, 'new.status_updated_at', '1 = 1'),
  ];
}

function leadUpdateBody(engine: Engine): string[] {
  const differs = (c: string) => (engine === 'postgres' ? `old.${c} is distinct from new.${c}` : `old.${c} is not new.${c}`);
  return [
    leadEvent(engine, STATUS_EVENT, 'new.status_updated_at', differs('status'), 'old.sale_status'),
    leadEvent(engine, "'lead.ftd'", ALERT_NOW[engine], 'new.ftd_at is not null and old.ftd_at is null', 'old.sale_status'),
    leadEvent(engine, "'lead.sale_status_changed'", ALERT_NOW[engine], differs('sale_status'), 'old.sale_status'),
  ];
}

/** Cap alerts: the reservation that reaches 90 % of a cap, and the one that fills it; once per cap and period. */
function capBody(engine: Engine): string[] {
  const json = engine === 'postgres' ? 'json_build_object' : 'json_object';
  const concat = (...parts: string[]) => parts.join(' || ');
  const caps =
    `select p.id as partner_id, cast(null as text) as flow_id, case when new.period = 'total' then p.total_cap else p.daily_cap end as cap, ` +
    `case when new.period = 'total' then 'total' else 'daily' end as kind from partners p where new.scope like 'partner:%' and p.id = substr(new.scope, 9) ` +
    `union all select t.partner_id, t.flow_id, t.daily_cap, 'flow_daily' from flow_targets t where new.scope like 'target:%' and t.id = substr(new.scope, 8)`;
  const near = '(c.cap * 9 + 9) / 10'; // 90 %, rounded up, in integers on both engines
  const type = `case when new.used >= c.cap then 'partner.cap_full' else 'partner.cap_nearly_full' end`;
  const data = `${json}('cap_kind', c.kind, 'flow_id', c.flow_id, 'period', new.period, 'used', new.used, 'cap', c.cap)${engine === 'postgres' ? '::text' : ''}`;
  return [
    `insert into events (type, occurred_at, partner_id, data, dedupe_key) ` +
      `select ${type}, ${ALERT_NOW[engine]}, c.partner_id, ${data}, ${concat(type, `':'`, 'new.scope', `':'`, 'new.period')} ` +
      `from (${caps}) c where c.cap is not null and c.cap > 0 and ((new.used >= c.cap and old.used < c.cap) or (new.used >= ${near} and old.used < ${near} and new.used < c.cap)) ` +
      `on conflict do nothing`,
  ];
}

const INTERRUPTED_ATTEMPT = "the server stopped while waiting for the partner's answer"; // recovery.ts: ours, not the partner's
/** A partner's calls failed this many times in a row: partner.failing (once per streak). */
const FAILING_ALERT_AFTER = 5;

/** A UUIDv7 made in SQL (the audit log pages by id, which must follow time). */
function uuid7(engine: Engine): string {
  if (engine === 'postgres') {
    return (
      `(select substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12) ` +
      `from (select lpad(to_hex((extract(epoch from clock_timestamp()) * 1000)::bigint), 12, '0') as h, md5(random()::text) as r) x)`
    );
  }
  return (
    `(select substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7' || substr(r, 1, 3) || '-8' || substr(r, 4, 3) || '-' || substr(r, 7, 12) ` +
    `from (select printf('%012x', cast((julianday('now') - 2440587.5) * 86400000 as integer)) as h, lower(hex(randomblob(9))) as r) x)`
  );
}

/**
 * A partner's health from its calls' outcomes: consecutive_failures counts failed calls in a row
 * (no answer, an error, HTTP 5xx; not a delivery our server interrupted), a call answered resets
 * it (no write when it is 0 already); the FAILING_ALERT_AFTER-th failure raises partner.failing;
 * with pause_after_failures set, reaching it pauses the partner, audited, with an alert.
 */
function attemptHealthBody(engine: Engine): string[] {
  const json = engine === 'postgres' ? 'json_build_object' : 'json_object';
  const asText = engine === 'postgres' ? '::text' : '';
  const bool = (b: boolean) => (engine === 'postgres' ? String(b) : `json('${b}')`); // SQLite's json_object writes a bare false as 0
  const failed = `(new.outcome in ('timeout', 'error') and coalesce(new.reason, '') <> '${INTERRUPTED_ATTEMPT.replace(/'/g, "''")}' or (new.outcome = 'rejected' and coalesce(new.http_status, 0) >= 500))`;
  const pausing = `p.id = new.partner_id and ${failed} and p.status = 'active' and p.pause_after_failures is not null and p.consecutive_failures >= p.pause_after_failures`;
  return [
    `update partners set consecutive_failures = case when ${failed} then consecutive_failures + 1 else 0 end where id = new.partner_id and (${failed} or consecutive_failures <> 0)`,
    `insert into events (type, occurred_at, partner_id, data, dedupe_key) select 'partner.failing', ${ALERT_NOW[engine]}, p.id, ` +
      `${json}('failures', p.consecutive_failures, 'last_reason', new.reason, 'paused', ${bool(false)})${asText}, 'partner.failing:' || p.id || ':' || new.id ` +
      `from partners p where p.id = new.partner_id and ${failed} and p.consecutive_failures = ${FAILING_ALERT_AFTER} on conflict do nothing`,
    `insert into events (type, occurred_at, partner_id, data, dedupe_key) select 'partner.failing', ${ALERT_NOW[engine]}, p.id, ` +
      `${json}('failures', p.consecutive_failures, 'last_reason', new.reason, 'paused', ${bool(true)})${asText}, 'partner.paused:' || p.id || ':' || new.id ` +
      `from partners p where ${pausing} on conflict do nothing`,
    `insert into audit_log (id, at, actor_id, actor_email, via, ip, action, target_type, target_id, details) ` +
      `select ${uuid7(engine)}, ${ALERT_NOW[engine]}, null, null, 'system', null, 'partner.paused', 'partner', p.id, ` +
      `${json}('name', p.name, 'failures', p.consecutive_failures, 'pause_after_failures', p.pause_after_failures, 'last_reason', new.reason)${asText} from partners p where ${pausing}`,
    `update partners set status = 'paused', updated_at = ${ALERT_NOW[engine]} where id = new.partner_id and status = 'active' and pause_after_failures is not null and consecutive_failures >= pause_after_failures and ${failed}`,
  ];
}

export async function up(db: Kysely<any>): Promise<void> {
  const engine: Engine = db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
  const serial = engine === 'postgres' ? 'bigint generated always as identity primary key' : 'integer primary key autoincrement';
  const ref = engine === 'postgres' ? 'bigint' : 'integer';
  const run = (q: string) => sql.raw(q).execute(db);

  // As few indexes as will do: every lead event pays for each (bench/RESULTS.md, "Event outbox").
  // fanned: 0 until a dispatcher has made its deliveries. Alerts (no lead) are the notifications.
  await run(
    `create table events (id ${serial}, type text not null, occurred_at text not null, lead_id text, partner_id text, ` +
      `traffic_provider_id text, campaign_id text, data text not null, dedupe_key text, fanned integer not null default 0)`,
  );
  await run(`create unique index events_dedupe on events (dedupe_key) where dedupe_key is not null`);
  await run(`create index events_unfanned on events (id) where fanned = 0`);
  await run(`create index events_alerts on events (type, id) where lead_id is null`);

  // One row per destination and event type, or per campaign when a destination wants only
  // some campaigns' events (a provider's campaign postbacks): never two rows that match one event.
  await run(
    `create table event_subscriptions (event_type text not null, destination_kind text not null, destination_id text not null, ` +
      `traffic_provider_id text, campaign_id text)`,
  );
  await run(`create unique index event_subscriptions_key on event_subscriptions (event_type, destination_kind, destination_id, campaign_id)`);
  await run(`create index event_subscriptions_destination on event_subscriptions (destination_kind, destination_id)`);

  await run(
    `create table event_deliveries (id ${serial}, event_id ${ref} not null, ` +
      `destination_kind text not null, destination_id text not null, lead_id text, state text not null, attempts integer not null, ` +
      `created_at text not null, next_attempt_at text not null, expires_at text not null, lease_until text, lease_token text, ` +
      `last_attempt_at text, last_status integer, last_error text)`,
  );
  await run(`create index event_deliveries_due on event_deliveries (next_attempt_at) where state = 'pending'`);
  await run(`create index event_deliveries_in_order on event_deliveries (destination_kind, destination_id, lead_id, event_id) where state = 'pending'`);
  await run(`create index event_deliveries_log on event_deliveries (destination_kind, destination_id, id)`);

  await run(
    `create table event_delivery_tries (id ${serial}, delivery_id ${ref} not null references event_deliveries (id) on delete cascade, ` +
      `attempted_at text not null, duration_ms integer not null, http_status integer, ok ${engine === 'postgres' ? 'boolean' : 'integer'} not null, ` +
      `error text, response_excerpt text)`,
  );
  await run(`create index event_delivery_tries_delivery on event_delivery_tries (delivery_id, id)`);

  await run(
    `create table webhooks (id text primary key, name text not null, url text not null, format text not null, telegram_chat_id text, ` +
      `event_types text not null, secret text not null, status text not null, disabled_reason text, failing_since text, ` +
      `created_at text not null, updated_at text not null)`,
  );

  // A traffic provider's postbacks (S2S, GET): a URL template per lead event, for all its
  // campaigns (campaign_id null) or one (which then replaces the provider-wide one).
  await run(
    `create table provider_postbacks (id text primary key, traffic_provider_id text not null references traffic_providers (id) on delete cascade, ` +
      `campaign_id text references campaigns (id) on delete cascade, event_type text not null, url text not null, created_at text not null)`,
  );
  await run(`create index provider_postbacks_provider on provider_postbacks (traffic_provider_id, event_type)`);

  // Every sale-status change and FTD of a lead, with where it came from.
  await run(
    `create table lead_status_history (id ${serial}, lead_id text not null references leads (id) on delete cascade, at text not null, ` +
      `source text not null, sale_status text, previous_sale_status text, ftd_at text)`,
  );
  await run(`create index lead_status_history_lead on lead_status_history (lead_id, id)`);

  // A partner's status pull: its configuration (as data, like the send integration) and its
  // schedule and health. One process runs a partner's pull at a time (lease_until).
  await run(
    `create table partner_status_pulls (partner_id text primary key references partners (id) on delete cascade, config text not null, ` +
      `next_run_at text not null, lease_until text, last_run_at text, last_ok_at text, last_error text, last_updated integer not null default 0, ` +
      `consecutive_failures integer not null default 0, updated_at text not null)`,
  );

  // A partner's health (attemptHealthBody) and a traffic provider's expected rhythm.
  await run(`alter table partners add column pause_after_failures integer`);
  await run(`alter table partners add column consecutive_failures integer not null default 0`);
  await run(`alter table traffic_providers add column silent_after_hours integer`);

  await run(`create table notification_reads (operator_id text primary key references operators (id) on delete cascade, last_read_event_id ${ref} not null)`);

  const triggers: [name: string, table: string, event: string, when: string | null, body: string[]][] = [
    ['leads_events_insert', 'leads', 'insert', null, leadInsertBody(engine)],
    [
      'leads_events_update',
      'leads',
      'update of status, ftd_at, sale_status',
      engine === 'postgres'
        ? '(old.status, old.ftd_at, old.sale_status) is distinct from (new.status, new.ftd_at, new.sale_status)'
        : 'old.status is not new.status or old.ftd_at is not new.ftd_at or old.sale_status is not new.sale_status',
      leadUpdateBody(engine),
    ],
    ['cap_counters_events', 'cap_counters', 'update of used', 'new.used > old.used', capBody(engine)],
    ['lead_attempts_health', 'lead_attempts', 'update of outcome', `old.outcome = 'in_flight' and new.outcome <> 'in_flight'`, attemptHealthBody(engine)],
  ];
  for (const [name, table, event, when, body] of triggers) {
    if (engine === 'postgres') {
      await run(`create function ${name}() returns trigger language plpgsql as $$ begin ${body.join('; ')}; return null; end $$`);
      await run(`create trigger ${name} after ${event} on ${table} for each row ${when ? `when (${when}) ` : ''}execute function ${name}()`);
    } else {
      await run(`create trigger ${name} after ${event} on ${table} for each row ${when ? `when ${when} ` : ''}begin ${body.join('; ')}; end`);
    }
  }
}
