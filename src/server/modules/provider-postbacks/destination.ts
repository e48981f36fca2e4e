import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import type { Destination } from '../../events/dispatcher.js';
import { sendHttp } from '../../events/send-http.js';
import { postbackRows, postbacksAlreadySent } from './queries.js';
import { postbackUrl, templateFor } from './service.js';

// Sends a lead event to its traffic provider's tracker: GET the postback URL for the event (the
// lead's campaign's own, else the provider-wide one), macros filled from the event. A provider
// gets one postback per lead and status event: a lead redelivered and rejected again does not
// send a second "rejected" (sale status changes are each their own; a delivery waits for the
// lead's earlier ones, so the first is recorded before the next is looked at).
export function postbackDestination(db: DB, agent: Agent): Destination {
  return {
    async prepare(providerIds, events) {
      // A provider's own lead: its contacts are the provider's to know; no masking here.
      const rows = await postbackRows(db, providerIds);
      const leadIds = [...new Set(events.flatMap((e) => (e.lead_id ? [e.lead_id] : [])))];
      const sent = await postbacksAlreadySent(db, providerIds, leadIds);
      return {
        async send(event, delivery) {
          if (sent.has(`${delivery.destination_id}\n${event.lead_id}\n${event.type}`))
            return { cancel: `not sent: the tracker already had the ${event.type} postback for this lead` };
          const template = templateFor(rows, delivery.destination_id, event.type, event.campaign_id);
          if (!template) return { cancel: 'the traffic provider has no postback for this event any more' };
          const target = postbackUrl(template, event);
          if ('refused' in target) return { cancel: target.refused };
          return sendHttp(
            agent,
            { method: 'GET', url: target.url, headers: { 'user-agent': 'Leadgate-Postback' }, body: null },
            "the provider's tracker",
          );
        },
      };
    },
  };
}
