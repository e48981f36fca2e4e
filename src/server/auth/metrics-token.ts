import { createHash, timingSafeEqual } from 'node:crypto';
import { HttpProblem } from '../http/errors.js';

// GET /metrics takes one shared secret, METRICS_TOKEN, as a Bearer token (Prometheus's
// `authorization: { type: Bearer }`). It is no operator credential: it grants the metrics and
// nothing else, and it is not in the database.

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * Passes when `authorization` carries the configured token. Unset token: 404 (the endpoint does
 * not exist); missing or wrong: 401. Both sides are hashed first, so the comparison is
 * constant-time over equal-length buffers whatever was sent (no length leak either).
 */
export function checkMetricsToken(expected: string | null, authorization: string | undefined): void {
  if (expected === null) throw new HttpProblem(404, 'not_found', 'No route GET /metrics.');
  const m = /^Bearer +(\S+)\s*$/i.exec(authorization ?? '');
  if (!m) throw new HttpProblem(401, 'unauthorized', 'Send the METRICS_TOKEN as Authorization: Bearer <token>.');
  if (!timingSafeEqual(digest(m[1]), digest(expected)))
    throw new HttpProblem(401, 'unauthorized', 'The metrics token is not valid.');
}
