import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { Agent } from 'undici';
import { exchange, type OutboundRequest } from '../outbound/exchange.js';
import { SEND_TIMEOUT_MS, type SendResult } from './dispatcher.js';

// One try of an event's HTTP call (webhooks, postbacks), through the outbound-guarded agent:
// 2xx is success; redirects are not followed (a redirect says where it pointed); the start of
// the answer is kept with the try.

const MAX_ANSWER_BYTES = 64 * 1024;
const EXCERPT_BYTES = 2048;

const excerptOf = (raw: Buffer) =>
  raw.length ? new StringDecoder('utf8').write(raw.subarray(0, EXCERPT_BYTES)) : null;

export async function sendHttp(
  agent: Agent,
  req: OutboundRequest,
  peer: string,
): Promise<Exclude<SendResult, { cancel: string }>> {
  const started = performance.now();
  const res = await exchange(agent, req, { timeoutMs: SEND_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES, peer });
  const duration_ms = Math.round(performance.now() - started);
  const status = res.answer?.status ?? null;
  const excerpt = res.answer ? excerptOf(res.answer.raw) : null;
  if (res.failure) return { ok: false, status, error: res.failure.reason, excerpt, duration_ms };
  const ok = status! >= 200 && status! < 300;
  const location = status! >= 300 && status! < 400 ? res.answer.headers.location : undefined;
  const error = ok
    ? null
    : `HTTP ${status}${location ? ` (redirects to ${location.slice(0, 200)}; redirects are not followed)` : ''}`;
  return { ok, status, error, excerpt, duration_ms };
}
