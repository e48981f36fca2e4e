import type { Kysely } from 'kysely';
import { issueToken } from '../../auth/credentials.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { HttpProblem } from '../../http/errors.js';

export async function createSession(db: Kysely<Database>, operatorId: string, ip: string, userAgent: string, idleMinutes: number) {
  const { id, token, secretHash } = issueToken('lgs_');
  const now = nowIso();
  await db
    .insertInto('sessions')
    .values({ id, secret_hash: secretHash, operator_id: operatorId, created_at: now, last_seen_at: now, ip, user_agent: userAgent.slice(0, 300) })
    .execute();
  return { token, expires_at: new Date(Date.now() + idleMinutes * 60_000).toISOString() };
}

// Failed logins, counted in the database so every instance sees the same numbers.
export const LOGIN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_ACCOUNT = 5;
export const MAX_FAILURES_PER_IP = 20;

async function failuresSince(db: Kysely<Database>, column: 'ip' | 'email', value: string, since: string) {
  return db.selectFrom('login_failures').select('at').where(column, '=', value).where('at', '>', since).orderBy('at').execute();
}

/** 429 with Retry-After while an address or an account is over its failure budget. */
export async function assertNotThrottled(db: Kysely<Database>, ip: string, email: string) {
  const now = Date.now();
  const since = new Date(now - LOGIN_WINDOW_MS).toISOString();
  const checks: [Awaited<ReturnType<typeof failuresSince>>, number][] = [
    [await failuresSince(db, 'email', email, since), MAX_FAILURES_PER_ACCOUNT],
    [await failuresSince(db, 'ip', ip, since), MAX_FAILURES_PER_IP],
  ];
  let retryAt = 0;
  for (const [rows, max] of checks) {
    if (rows.length >= max) {
      // Free again when enough of the oldest failures have left the window.
      const t = Date.parse(rows[rows.length - max].at) + LOGIN_WINDOW_MS;
      retryAt = Math.max(retryAt, t);
    }
  }
  if (retryAt > now) {
    const seconds = Math.max(1, Math.ceil((retryAt - now) / 1000));
    throw new HttpProblem(429, 'rate_limited', `Too many failed logins; try again in ${seconds} s.`, undefined, { 'Retry-After': String(seconds) });
  }
}

export async function recordFailure(db: Kysely<Database>, ip: string, email: string) {
  const cutoff = new Date(Date.now() - LOGIN_WINDOW_MS).toISOString();
  await db.insertInto('login_failures').values({ id: newId(), at: nowIso(), ip, email }).execute();
  await db.deleteFrom('login_failures').where('email', '=', email).where('at', '<=', cutoff).execute();
  await db.deleteFrom('login_failures').where('ip', '=', ip).where('at', '<=', cutoff).execute();
}

export async function clearFailures(db: Kysely<Database>, email: string) {
  await db.deleteFrom('login_failures').where('email', '=', email).execute();
}
