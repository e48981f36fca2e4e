// What operators' credentials (auth/authenticate.ts) and traffic providers' portal credentials
// (auth/portal.ts) check alike: the Authorization header, a session's idle and absolute lifetime,
// and the last-use stamps, written at most once a minute per session or key.
import type { Config } from '../config.js';
import type { DB } from '../db/database.js';
import { nowIso } from '../db/ids.js';
import { HttpProblem } from '../http/errors.js';
import { parseToken, type ParsedToken } from './credentials.js';

const LAST_USED_GRANULARITY_MS = 60_000;

export const unauthorized = (detail: string) => new HttpProblem(401, 'unauthorized', detail);

const stale = (iso: string | null, now: number) => iso === null || now - Date.parse(iso) >= LAST_USED_GRANULARITY_MS;

type Kind = ParsedToken['kind'];

/**
 * Authorization header → a well-formed token of one of `kinds`, or 401. Pure: no database. A
 * token of the other side's kinds (`foreign`) is refused with `foreignDetail`, before any lookup.
 */
export function bearerToken(
  authorization: string | undefined,
  o: { kinds: readonly Kind[]; missing: string; foreign: readonly Kind[]; foreignDetail: string },
): ParsedToken {
  if (!authorization) throw unauthorized(o.missing);
  const m = /^Bearer +(\S+)\s*$/i.exec(authorization);
  if (!m) throw unauthorized('The Authorization header must be "Bearer <token>".');
  const parsed = parseToken(m[1]);
  if (parsed && o.foreign.includes(parsed.kind)) throw unauthorized(o.foreignDetail);
  if (!parsed || !o.kinds.includes(parsed.kind)) throw unauthorized('The token is malformed.');
  return parsed;
}

/**
 * Why a session has ended, or null: idle past SESSION_IDLE_MINUTES, or (however busy) past
 * SESSION_MAX_HOURS after sign-in, so a stolen token is not good forever just because it is used.
 */
export function sessionEnded(
  row: { last_seen_at: string; created_at: string },
  now: number,
  limits: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>,
): string | null {
  if (now - Date.parse(row.last_seen_at) > limits.sessionIdleMinutes * 60_000)
    return 'The session has expired; log in again.';
  if (now - Date.parse(row.created_at) > limits.sessionMaxHours * 3_600_000)
    return 'The session has reached its maximum lifetime; log in again.';
  return null;
}

/** A session's last_seen_at moved on, at most once a minute (the stamp moves the auth generation by trigger). */
export async function markSessionSeen(
  db: DB,
  table: 'sessions' | 'provider_sessions',
  id: string,
  lastSeen: string,
  now: number,
) {
  if (stale(lastSeen, now))
    await db
      .updateTable(table as 'sessions')
      .set({ last_seen_at: nowIso() })
      .where('id', '=', id)
      .execute();
}

/** A key's last_used_at, at most once a minute: conditional, so instances racing on one key write once. */
export async function markKeyUsed(
  db: DB,
  table: 'api_keys' | 'provider_api_keys',
  id: string,
  lastUsed: string | null,
  now: number,
) {
  if (!stale(lastUsed, now)) return;
  const cutoff = new Date(now - LAST_USED_GRANULARITY_MS).toISOString();
  await db
    .updateTable(table as 'api_keys')
    .set({ last_used_at: nowIso() })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', cutoff)]))
    .execute();
}
