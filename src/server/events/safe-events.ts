import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import type { StoredEvent } from './dispatcher.js';
import { contactMasker, maskDeep, maskFreeText } from '../privacy/mask.js';

// Events carry no contacts (SECURITY.md), yet some of what they carry was written by someone
// else: a partner's sale status, a failing partner's answer quoted as last_reason (which may
// quote the lead it was sent), a status pull's error. Event data leaves Leadgate by webhooks
// (every format, and the delivery log's payload) and the notifications API, whose readers need
// not hold leads:contacts: every one of those paths takes the event through safeEvents first.
// The outbox keeps what was written; masking happens on the way out, so a better masker later
// covers old events too.

/**
 * The events as they may leave: a lead's event with every spelling of that lead's email and phone
 * masked in every text (its sub ids keep their numbers: a click id is not a contact); an event
 * about no lead (alerts) with anything contact-shaped masked in every text. One query for the
 * round's leads.
 */
export async function safeEvents(
  db: Kysely<Database>,
  events: StoredEvent[],
): Promise<(event: StoredEvent) => StoredEvent> {
  const ids = [...new Set(events.flatMap((e) => (e.lead_id ? [e.lead_id] : [])))];
  const rows = ids.length
    ? await db.selectFrom('leads').select(['id', 'email', 'phone']).where('id', 'in', ids).execute()
    : [];
  const maskers = new Map(rows.map((r) => [r.id, contactMasker(r)]));
  return (event) => {
    // A lead is never deleted; were one gone, anything contact-shaped goes.
    const mask = event.lead_id ? (maskers.get(event.lead_id) ?? maskFreeText) : maskFreeText;
    return { ...event, data: maskDeep(event.data, mask) as Record<string, unknown> };
  };
}
