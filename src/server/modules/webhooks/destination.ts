import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { writeTransaction } from '../../db/write-batch.js';
import { emitEvent } from '../../events/emit.js';
import type { Destination } from '../../events/dispatcher.js';
import { sendHttp } from '../../events/send-http.js';
import { ownerCheck } from './access.js';
import { safeEvents } from '../../events/safe-events.js';
import { cancelPending } from './queries.js';
import { eventNames, NO_NAMES, renderBody, signedPost, syncSubscriptions } from './service.js';

// Sends an event to a webhook: signed per Standard Webhooks, through the outbound guard (the
// agent), 2xx is success. An event its owner may not read now is not sent: the delivery ends
// (cancelled, saying why) rather than waiting for a permission that may never come back. A
// webhook whose tries have all failed for DISABLE_AFTER_DAYS is disabled, its pending
// deliveries cancelled, and a webhook.disabled event written, in one transaction.

export const DISABLE_AFTER_DAYS = 5;

export function webhookDestination(db: DB, agent: Agent, log: FastifyBaseLogger): Destination {
  return {
    async prepare(ids, events) {
      const rows = await db
        .selectFrom('webhooks as w')
        .leftJoin('operators as o', 'o.id', 'w.owner_id')
        .leftJoin('roles as r', 'r.id', 'o.role_id')
        .selectAll('w')
        .select([
          'o.status as owner_status',
          'r.builtin as owner_builtin',
          'r.permissions as owner_permissions',
          'r.scope_traffic_provider_ids as owner_scope_traffic_provider_ids',
          'r.scope_partner_ids as owner_scope_partner_ids',
        ])
        .where('w.id', 'in', ids)
        .execute();
      const hooks = new Map(rows.map((h) => [h.id, { ...h, mayRead: ownerCheck(h) }]));
      const safe = await safeEvents(db, events);
      const names = [...hooks.values()].some((h) => h.format !== 'json')
        ? await eventNames(db, events)
        : () => NO_NAMES;
      return {
        async send(event, delivery) {
          const hook = hooks.get(delivery.destination_id);
          if (!hook) return { cancel: 'the webhook was deleted' };
          if (hook.status !== 'active') return { cancel: 'the webhook is disabled' };
          const refused = hook.mayRead(event.type);
          if (refused) return { cancel: refused };
          const body = renderBody(hook.format, hook.telegram_chat_id, safe(event), names(event));
          return sendHttp(agent, signedPost(hook, `evt_${event.id}`, body), 'the receiver');
        },

        // A success clears failing_since; a round of failures only sets it (once) or, past
        // DISABLE_AFTER_DAYS, disables the webhook: no write while all is well.
        async afterTries(tries) {
          for (const id of new Set(tries.map((t) => t.id))) {
            const hook = hooks.get(id);
            if (!hook) continue;
            try {
              if (tries.some((t) => t.id === id && t.ok)) {
                if (hook.failing_since !== null)
                  await db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', id).execute();
              } else if (hook.failing_since === null) {
                await db
                  .updateTable('webhooks')
                  .set({ failing_since: nowIso() })
                  .where('id', '=', id)
                  .where('failing_since', 'is', null)
                  .execute();
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
    await emitEvent(tx, {
      type: 'webhook.disabled',
      data: { webhook_id: id, name: hook.name, reason, failing_since: hook.failing_since },
    });
  });
}
