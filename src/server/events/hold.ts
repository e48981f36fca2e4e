import type { DB } from '../db/database.js';
import { nowIso } from '../db/ids.js';

// The FTD hold (issue 27): a traffic provider with ftd_hold_hours > 0 learns of an FTD only that
// long after it was recorded, and that covers what the outbox sends it: its postbacks and the
// webhooks limited to it (event_subscriptions.traffic_provider_id). Their lead.ftd deliveries are
// made due (next_attempt_at) at the end of the hold, when fanned out; an FTD reversed before
// then is never sent (cancelled). Later deliveries of the same lead to the same destination wait
// behind it (the claim keeps a lead's events in order), so a sale status cannot tell it early.
// Webhooks for every provider (no traffic_provider_id) are the operator's own: not held.

const CANCELLED = 'the FTD was reversed during the traffic provider’s hold; not sent';
/** A held delivery may still be retried this long after its hold ends (dispatcher's EXPIRES_MS). */
const EXPIRES_AFTER_MS = 24 * 3600_000;

/** Holds the provider-scoped lead.ftd deliveries just made for these events (fan-out, its transaction). */
export async function holdProviderFtds(tx: DB, eventIds: number[]): Promise<void> {
  const held = await tx
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .innerJoin('traffic_providers as tp', 'tp.id', 'e.traffic_provider_id')
    .leftJoin('leads as l', 'l.id', 'e.lead_id')
    .select(['d.id', 'e.occurred_at', 'tp.ftd_hold_hours', 'l.ftd_at'])
    .where('d.event_id', 'in', eventIds)
    .where('e.type', '=', 'lead.ftd')
    .where('tp.ftd_hold_hours', '>', 0)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('event_subscriptions as s')
          .select('s.event_type')
          .whereRef('s.destination_kind', '=', 'd.destination_kind')
          .whereRef('s.destination_id', '=', 'd.destination_id')
          .where('s.event_type', '=', 'lead.ftd')
          .where('s.traffic_provider_id', 'is not', null),
      ),
    )
    .execute();
  for (const h of held) {
    if (h.ftd_at === null) {
      await tx
        .updateTable('event_deliveries')
        .set({ state: 'cancelled', last_error: CANCELLED })
        .where('id', '=', h.id)
        .execute();
      continue;
    }
    const due = Date.parse(h.occurred_at) + Number(h.ftd_hold_hours) * 3_600_000;
    await tx
      .updateTable('event_deliveries')
      .set({ next_attempt_at: new Date(due).toISOString(), expires_at: new Date(due + EXPIRES_AFTER_MS).toISOString() })
      .where('id', '=', h.id)
      .execute();
  }
}

/** An FTD reversed (conversions/apply.ts): its lead.ftd deliveries still held are cancelled, never sent. */
export async function cancelHeldFtdDeliveries(tx: DB, leadId: string): Promise<void> {
  await tx
    .updateTable('event_deliveries')
    .set({ state: 'cancelled', last_error: CANCELLED })
    .where('lead_id', '=', leadId)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '>', nowIso())
    .where('event_id', 'in', (eb) =>
      eb.selectFrom('events').select('id').where('lead_id', '=', leadId).where('type', '=', 'lead.ftd'),
    )
    .execute();
}
