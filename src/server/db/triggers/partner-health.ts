import type { Engine } from '../database.js';
import { ALERT_NOW, defineTrigger, pgIf } from './define.js';

// A partner's health from its calls' outcomes (lead_attempts leaving in_flight):
// consecutive_failures counts failed calls in a row (no answer, an error, HTTP 5xx; not a
// delivery our server interrupted), a call answered resets it (no write when it is 0 already);
// the FAILING_ALERT_AFTER-th failure raises partner.failing; with pause_after_failures set,
// reaching it pauses the partner, audited, with an alert.
// From 20261126T000000Z_event_outbox.

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

function attemptHealthBody(engine: Engine): string[] {
  const json = engine === 'postgres' ? 'json_build_object' : 'json_object';
  const asText = engine === 'postgres' ? '::text' : '';
  const bool = (b: boolean) => (engine === 'postgres' ? String(b) : `json('${b}')`); // SQLite's json_object writes a bare false as 0
  const failed = `(new.outcome in ('timeout', 'error') and coalesce(new.reason, '') <> '${INTERRUPTED_ATTEMPT.replace(/'/g, "''")}' or (new.outcome = 'rejected' and coalesce(new.http_status, 0) >= 500))`;
  const pausing = `p.id = new.partner_id and ${failed} and p.status = 'active' and p.pause_after_failures is not null and p.consecutive_failures >= p.pause_after_failures`;
  const statements = [
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
  // PostgreSQL: a call answered (the common case) runs the reset alone (define.ts pgIf).
  return engine === 'postgres' ? [pgIf(failed, statements, [statements[0]])] : statements;
}

export const leadAttemptsHealth = defineTrigger(
  'lead_attempts_health',
  'lead_attempts',
  'update of outcome',
  (engine) => ({
    when: `old.outcome = 'in_flight' and new.outcome <> 'in_flight'`,
    body: attemptHealthBody(engine),
  }),
);

export const PARTNER_HEALTH_TRIGGERS = [leadAttemptsHealth];
