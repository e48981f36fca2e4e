import { ALERT_NOW, defineTrigger } from './define.js';

// Cap alerts: the reservation that reaches 90 % of a cap raises partner.cap_nearly_full, the one
// that fills it partner.cap_full; once per cap and period (events.dedupe_key). The cap_counters
// row carries what it counts and the cap it was last compared with (written by the reservation,
// distribution/caps.ts), so every kind of cap alerts the same way.
// From 20261126T100000Z_routing_rules (first 20261126T000000Z_event_outbox).

export const capCountersEvents = defineTrigger('cap_counters_events', 'cap_counters', 'update of used', (engine) => {
  const json = engine === 'postgres' ? 'json_build_object' : 'json_object';
  const near = '(new.cap * 9 + 9) / 10'; // 90 %, rounded up, in integers on both engines
  const type = `case when new.used >= new.cap then 'partner.cap_full' else 'partner.cap_nearly_full' end`;
  const data =
    `${json}('cap_kind', new.cap_kind, 'flow_id', new.flow_id, 'period', new.period, 'used', new.used, 'cap', new.cap, ` +
    `'country', new.country, 'counts', new.counts)${engine === 'postgres' ? '::text' : ''}`;
  return {
    when: 'new.used > old.used',
    body: [
      `insert into events (type, occurred_at, partner_id, data, dedupe_key) ` +
        `select ${type}, ${ALERT_NOW[engine]}, new.partner_id, ${data}, ${type} || ':' || new.scope || ':' || new.period ` +
        `where new.partner_id is not null and new.cap is not null and new.cap > 0 ` +
        `and ((new.used >= new.cap and old.used < new.cap) or (new.used >= ${near} and old.used < ${near} and new.used < new.cap)) ` +
        `on conflict do nothing`,
    ],
  };
});

export const CAP_TRIGGERS = [capCountersEvents];
