import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { writeTransaction } from '../../db/write-batch.js';
import { emitEvent } from '../../events/emit.js';
import type { Destination, StoredEvent } from '../../events/dispatcher.js';
import { contactMasker, maskDeep, type Masker } from '../leads/mask.js';
import { sendHttp } from '../../events/send-http.js';
import { cancelPending, eventNames, NO_NAMES, renderBody, sign, syncSubscriptions } from './service.js';

// Sends an event to a webhook: signed per Standard Webhooks, through the outbound guard (the
// agent), 2xx is success. A webhook whose tries have all failed for DISABLE_AFTER_DAYS is
// disabled, its pending deliveries cancelled, and a webhook.disabled event written, in one
// transaction.

export const DISABLE_AFTER_DAYS = 5;

export function webhookDestination(db: DB, agent: Agent, log: FastifyBaseLogger): Destination {
  return {
    async prepare(ids, events) {
      const hooks = new Map((await db.selectFrom('webhooks').selectAll().where('id', 'in', ids).execute()).map((h) => [h.id, h]));
      const contacts = await contactsOf(db, events);
      const names = [...hooks.values()].some((h) => h.format !== 'json') ? await eventNames(db, events) : () => NO_NAMES;
      return {
        async send(event, delivery) {
          const hook = hooks.get(delivery.destination_id);
          if (!hook) return { cancel: 'the webhook was deleted' };
          if (hook.status !== 'active') return { cancel: 'the webhook is disabled' };
          const body = renderBody(hook.format, hook.telegram_chat_id, withoutContacts(event, contacts), names(event));
          const id = `evt_${event.id}`;
          const timestamp = Math.floor(Date.now() / 1000);
          const headers = {
            'content-type': 'application/json',
            'user-agent': 'Leadgate-Webhooks',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': sign(hook.secret, id, timestamp, body),
          };
          return sendHttp(agent, { method: 'POST', url: hook.url, headers, body }, 'the receiver');
        },

        // A success clears failing_since; a round of failures only sets it (once) or, past
        // DISABLE_AFTER_DAYS, disables the webhook: no write while all is well.
        async afterTries(tries) {
          for (const id of new Set(tries.map((t) => t.id))) {
            const hook = hooks.get(id);
            if (!hook) continue;
            try {
              if (tries.some((t) => t.id === id && t.ok)) {
                if (hook.failing_since !== null) await db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', id).execute();
              } else if (hook.failing_since === null) {
                await db.updateTable('webhooks').set({ failing_since: nowIso() }).where('id', '=', id).where('failing_since', 'is', null).execute();
              } else if (Date.parse(hook.failing_since) < Date.now() - DISABLE_AFTER_DAYS * 86400_000) {
                await disable(db, id);
              }
            } catch (err) {
              log.error({ err, webhookId: id }, 'recording a webhook failure failed');
            }
          }
        },
      };
    },
  };
}

/** The contacts of the round's leads, to mask them out of what partners wrote (a sale status may quote them). */
export async function contactsOf(db: DB, events: StoredEvent[]) {
  const ids = [...new Set(events.flatMap((e) => (e.lead_id ? [e.lead_id] : [])))];
  const rows = ids.length ? await db.selectFrom('leads').select(['id', 'email', 'phone']).where('id', 'in', ids).execute() : [];
  return new Map(rows.map((r) => [r.id, contactMasker(r)]));
}

/** The event with its lead's contacts masked in every text it carries (webhook receivers need not hold leads:contacts). */
export function withoutContacts(event: StoredEvent, contacts: Map<string, Masker>): StoredEvent {
  const mask = event.lead_id ? contacts.get(event.lead_id) : undefined;
  return mask ? { ...event, data: maskDeep(event.data, mask) as Record<string, unknown> } : event;
}

/** Disables a webhook failing since before the cutoff, cancels what it had pending, and says so in an event. */
async function disable(db: DB, id: string) {
  const now = nowIso();
  const cutoff = new Date(Date.now() - DISABLE_AFTER_DAYS * 86400_000).toISOString();
  const reason = `every try failed for ${DISABLE_AFTER_DAYS} days`;
  await writeTransaction(db, async (tx) => {
    const hook = await tx
      .updateTable('webhooks')
      .set({ status: 'disabled', disabled_reason: reason, updated_at: now })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .where('failing_since', '<', cutoff)
      .returning(['id', 'name', 'status', 'event_types', 'failing_since'])
      .executeTakeFirst();
    if (!hook) return;
    await syncSubscriptions(tx, hook);
    await cancelPending(tx, id, 'the webhook was disabled after failing for days');
    await emitEvent(tx, { type: 'webhook.disabled', data: { webhook_id: id, name: hook.name, reason, failing_since: hook.failing_since } });
  });
}
