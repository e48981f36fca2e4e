import { randomUUID } from 'node:crypto';
import type { Agent } from 'undici';
import type { DB } from '../../db/database.js';
import { sendHttp } from '../../events/send-http.js';
import { notFound } from '../../http/errors.js';
import { findWebhookRow } from './queries.js';
import { signedPost } from './service.js';

// "Send test event": one signed event sent to a webhook now, as a real event is sent (the same
// signing, headers, outbound guard and HTTP exchange), its answer reported. Stores nothing: no
// event, no delivery, no audit record.

const TEXT = 'Test event from Leadgate: this webhook is reachable.';

export async function sendTestEvent(db: DB, agent: () => Agent, id: string) {
  const hook = (await findWebhookRow(db, id)) ?? notFound('webhook');
  const eventId = `evt_test_${randomUUID()}`;
  const body =
    hook.format === 'json'
      ? JSON.stringify({
          type: 'webhook.test',
          timestamp: new Date().toISOString(),
          data: { event_id: eventId, webhook_id: hook.id, message: TEXT },
        })
      : JSON.stringify(
          hook.format === 'slack' ? { text: `[Leadgate] ${TEXT}` } : { chat_id: hook.telegram_chat_id, text: TEXT },
        );
  const r = await sendHttp(agent(), signedPost(hook, eventId, body), 'the receiver');
  return {
    event_id: eventId,
    ok: r.ok,
    http_status: r.status,
    error: r.error,
    response_excerpt: r.excerpt,
    duration_ms: r.duration_ms,
  };
}
