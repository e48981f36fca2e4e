import type { Engine } from '../database.js';
import { ALERT_NOW, defineTrigger, pgIf } from './define.js';

// Lead events into the outbox (events), written in the same statement as the change they tell
// of: received (insert), delivered / rejected (and duplicate) / failed (status), FTD (ftd_at
// set), sale status changed. Written only when some subscription wants the event, so an
// installation with no webhook or postback pays one index probe per change.
// From 20261126T000000Z_event_outbox.

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
function leadEvent(
  engine: Engine,
  type: string,
  occurredAt: string,
  cond: string,
  previousSaleStatus = 'null',
): string {
  const insert =
    `insert into events (type, occurred_at, lead_id, partner_id, traffic_provider_id, campaign_id, data) ` +
    `select t.type, ${occurredAt}, new.id, new.partner_id, new.traffic_provider_id, new.campaign_id, ${leadSnapshot(engine, previousSaleStatus)} ` +
    `from (select ${type} as type) t where t.type is not null and ${cond} and ${wanted('t.type')}`;
  // PostgreSQL: the conditions first, as a plpgsql IF (define.ts pgIf): with nobody subscribed,
  // one probe of event_subscriptions and no insert set up.
  return engine === 'postgres' ? pgIf(`(${type}) is not null and ${cond} and ${wanted(type)}`, [insert]) : insert;
}

/** The event of a lead's status: delivered, rejected (a duplicate too), failed; null for the others. */
const STATUS_EVENT =
  "(case new.status when 'delivered' then 'lead.delivered' when 'rejected' then 'lead.rejected' when 'duplicate' then 'lead.rejected' when 'failed' then 'lead.failed' end)";

// An imported lead (import_id set) emits none: the import is audited instead (20261203T110000Z_imports).
export const leadsEventsInsert = defineTrigger('leads_events_insert', 'leads', 'insert', (engine) => ({
  when: 'new.import_id is null',
  body: [
    leadEvent(engine, "'lead.received'", 'new.created_at', '1 = 1'),
    // Intake may store a lead already decided (a duplicate, or refused by its flow).
    leadEvent(engine, STATUS_EVENT, 'new.status_updated_at', '1 = 1'),
  ],
}));

export const leadsEventsUpdate = defineTrigger(
  'leads_events_update',
  'leads',
  'update of status, ftd_at, sale_status',
  (engine) => {
    const differs = (c: string) =>
      engine === 'postgres' ? `old.${c} is distinct from new.${c}` : `old.${c} is not new.${c}`;
    return {
      when:
        engine === 'postgres'
          ? '(old.status, old.ftd_at, old.sale_status) is distinct from (new.status, new.ftd_at, new.sale_status)'
          : 'old.status is not new.status or old.ftd_at is not new.ftd_at or old.sale_status is not new.sale_status',
      body: [
        leadEvent(engine, STATUS_EVENT, 'new.status_updated_at', differs('status'), 'old.sale_status'),
        leadEvent(
          engine,
          "'lead.ftd'",
          ALERT_NOW[engine],
          'new.ftd_at is not null and old.ftd_at is null',
          'old.sale_status',
        ),
        leadEvent(engine, "'lead.sale_status_changed'", ALERT_NOW[engine], differs('sale_status'), 'old.sale_status'),
      ],
    };
  },
);

export const LEAD_EVENT_TRIGGERS = [leadsEventsInsert, leadsEventsUpdate];
