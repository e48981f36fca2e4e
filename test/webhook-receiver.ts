import { createHmac, timingSafeEqual } from 'node:crypto';
import type { TestContext } from 'node:test';
import { json, startPartner, type ReceivedRequest, type TestPartner } from './partner-server.js';

// A webhook receiver on loopback that verifies each request the way the Standard Webhooks
// libraries do, written from the specification (not from Leadgate's code): the key is the
// base64 after "whsec_", the signed content "<webhook-id>.<webhook-timestamp>.<body>", and the
// header a space-separated list of "v1,<base64 HMAC-SHA256>", one of which must match.

export function verifySignature(secret: string, headers: ReceivedRequest['headers'], body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (!/^[0-9]+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
    .update(`${id}.${timestamp}.${body}`)
    .digest();
  return signatures.split(' ').some((s) => {
    const [version, sig] = s.split(',');
    const given = Buffer.from(sig ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}

export interface Receiver extends TestPartner {
  /** Answers with this status from now on (default 200). */
  answer(status: number): void;
}

export async function startReceiver(t: TestContext): Promise<Receiver> {
  let status = 200;
  const server = await startPartner(t, (_req, res) => json(res, status, { ok: status < 300 }));
  return { ...server, answer: (s) => (status = s) };
}
