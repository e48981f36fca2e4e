import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { FastifyBaseLogger } from 'fastify';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { writeTransaction } from '../../db/write-batch.js';
import { exchange } from '../../distribution/exchange.js';
import { emitEvent } from '../../events/emit.js';
import { SEND_TIMEOUT_MS, type Destination } from '../../events/dispatcher.js';
import { cancelPending, namesOf, renderBody, sign, syncSubscriptions } from './service.js';

// Sends an event to a webhook: signed per Standard Webhooks, through the outbound guard (the
// agent), 2xx is success. A webhook whose tries have all failed for DISABLE_AFTER_DAYS is
// disabled, its pending deliveries cancelled, and a webhook.disabled event written, in one
// transaction.

export const DISABLE_AFTER_DAYS = 5;
/** Read of an answer; its start is kept with the try. */
const MAX_ANSWER_BYTES = 64 * 1024;
const EXCERPT_BYTES = 2048;

const excerptOf = (raw: Buffer) => (raw.length ? new StringDecoder('utf8').write(raw.subarray(0, EXCERPT_BYTES)) : null);

export function webhookDestination(db: DB, agent: Agent, log: FastifyBaseLogger): Destination {
  return {
    async send(event, delivery) {
      const hook = await db.selectFrom('webhooks').selectAll().where('id', '=', delivery.destination_id).executeTakeFirst();
      if (!hook) return { cancel: 'the webhook was deleted' };
      if (hook.status !== 'active') return { cancel: 'the webhook is disabled' };
      const body = renderBody(hook.format, hook.telegram_chat_id, event, hook.format === 'json' ? { partner: null, campaign: null, provider: null } : await namesOf(db, event));
      const id = `evt_${event.id}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'Leadgate-Webhooks',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': sign(hook.secret, id, timestamp, body),
      };
      const started = performance.now();
      const res = await exchange(agent, { method: 'POST', url: hook.url, headers, body }, { timeoutMs: SEND_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES, peer: 'the receiver' });
      const duration_ms = Math.round(performance.now() - started);
      const status = res.answer?.status ?? null;
      const excerpt = res.answer ? excerptOf(res.answer.raw) : null;
      if (res.failure) return { ok: false, status, error: res.failure.reason, excerpt, duration_ms };
      const ok = status! >= 200 && status! < 300;
      const location = status! >= 300 && status! < 400 ? res.answer.headers.location : undefined;
      return { ok, status, error: ok ? null : `HTTP ${status}${location ? ` (redirects to ${location.slice(0, 200)}; redirects are not followed)` : ''}`, excerpt, duration_ms };
    },

    async afterTry(id, ok) {
      try {
        if (ok) {
          await db.updateTable('webhooks').set({ failing_since: null }).where('id', '=', id).where('failing_since', 'is not', null).execute();
          return;
        }
        const now = nowIso();
        await db.updateTable('webhooks').set({ failing_since: now }).where('id', '=', id).where('failing_since', 'is', null).execute();
        const cutoff = new Date(Date.now() - DISABLE_AFTER_DAYS * 86400_000).toISOString();
        await writeTransaction(db, async (tx) => {
          const reason = `every try failed for ${DISABLE_AFTER_DAYS} days`;
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
      } catch (err) {
        log.error({ err, webhookId: id }, 'recording a webhook failure failed');
      }
    },
  };
}
