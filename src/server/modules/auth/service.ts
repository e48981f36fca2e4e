import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { issueToken } from '../../auth/credentials.js';
import { clientIp } from '../../auth/guard.js';
import { verifyPassword } from '../../auth/passwords.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { HttpProblem, invalid } from '../../http/errors.js';
import type { Principal } from '../../types.js';
import { audit } from '../audit/service.js';

export async function createSession(
  db: Kysely<Database>,
  operatorId: string,
  ip: string,
  userAgent: string,
  idleMinutes: number,
) {
  const { id, token, secretHash } = issueToken('lgs_');
  const now = nowIso();
  await db
    .insertInto('sessions')
    .values({
      id,
      secret_hash: secretHash,
      operator_id: operatorId,
      created_at: now,
      last_seen_at: now,
      ip,
      user_agent: userAgent.slice(0, 300),
    })
    .execute();
  return { token, expires_at: new Date(Date.now() + idleMinutes * 60_000).toISOString() };
}

// Login throttling. Every attempt to prove who you are (a password at login, a TOTP or recovery
// code, a current_password asked again) is a row in login_failures, written and committed BEFORE
// the secret is judged, and the budget is read back after that commit. Checking first and
// recording after the (slow, argon2) verification let thirty concurrent guesses all pass the
// check before any was recorded. Counted this way, the k-th attempt to commit sees at least k
// rows, so however many race, at most MAX of them are judged; the rows live in the database, so
// this holds across server instances and on both engines. The insert must not sit in a
// transaction with the read: uncommitted, concurrent attempts would not see each other.
// An attempt that turns out not to be a failure (a right password, a right code) is forgotten
// again; one that is refused for being over budget is forgotten too, so hammering a locked
// account does not push its Retry-After further away.
export const LOGIN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_ACCOUNT = 5;
export const MAX_FAILURES_PER_IP = 20;

/** A counted attempt: its row stays as a failure unless forgotten. */
export interface Attempt {
  id: string;
  email: string;
  ip: string;
}

/**
 * When the `max`-th newest other attempt within the window leaves it, or null when fewer than
 * `max` other attempts are in the window (this one is then within budget).
 */
async function freeAt(
  db: Kysely<Database>,
  column: 'ip' | 'email',
  value: string,
  since: string,
  exceptId: string,
  max: number,
) {
  const row = await db
    .selectFrom('login_failures')
    .select('at')
    .where(column, '=', value)
    .where('at', '>', since)
    .where('id', '!=', exceptId)
    .orderBy('at', 'desc')
    .orderBy('id', 'desc')
    .offset(max - 1)
    .limit(1)
    .executeTakeFirst();
  return row ? Date.parse(row.at) + LOGIN_WINDOW_MS : null;
}

/**
 * Counts an attempt for `email` from `ip` before it is judged; 429 rate_limited with Retry-After
 * (and nothing counted) when the account or the address is over its failure budget.
 */
export async function beginAttempt(db: Kysely<Database>, ip: string, email: string): Promise<Attempt> {
  const attempt = { id: newId(), email, ip };
  const now = Date.now();
  await db
    .insertInto('login_failures')
    .values({ id: attempt.id, at: new Date(now).toISOString(), ip, email })
    .execute();
  const since = new Date(now - LOGIN_WINDOW_MS).toISOString();
  const [account, address] = await Promise.all([
    freeAt(db, 'email', email, since, attempt.id, MAX_FAILURES_PER_ACCOUNT),
    freeAt(db, 'ip', ip, since, attempt.id, MAX_FAILURES_PER_IP),
  ]);
  if (account !== null || address !== null) {
    await forgetAttempt(db, attempt);
    // The later of the two decides when a try can be judged again. The RateLimit headers say so
    // in the same draft-ietf-httpapi-ratelimit-headers form as the request limits (http/rate-limit.ts),
    // standing in for theirs on this answer: this is the limit that refused.
    const [retryAt, policy, max] =
      (account ?? 0) >= (address ?? 0)
        ? [account!, 'login-account', MAX_FAILURES_PER_ACCOUNT]
        : [address!, 'login-ip', MAX_FAILURES_PER_IP];
    const seconds = String(Math.max(1, Math.ceil((retryAt - Date.now()) / 1000)));
    throw new HttpProblem(429, 'rate_limited', `Too many failed attempts; try again in ${seconds} s.`, undefined, {
      'Retry-After': seconds,
      'RateLimit-Policy': `"${policy}";q=${max};w=${LOGIN_WINDOW_MS / 1000}`,
      RateLimit: `"${policy}";r=0;t=${seconds}`,
    });
  }
  // Old rows of this account and address are of no more use.
  const cutoff = new Date(now - LOGIN_WINDOW_MS).toISOString();
  await db.deleteFrom('login_failures').where('email', '=', email).where('at', '<=', cutoff).execute();
  await db.deleteFrom('login_failures').where('ip', '=', ip).where('at', '<=', cutoff).execute();
  return attempt;
}

/** The attempt was not a failure after all (e.g. a right password still waiting for its code). */
export async function forgetAttempt(db: Kysely<Database>, attempt: Attempt) {
  await db.deleteFrom('login_failures').where('id', '=', attempt.id).execute();
}

/** A successful login: the account's failures (this attempt among them) stop counting. */
export async function clearFailures(db: Kysely<Database>, email: string) {
  await db.deleteFrom('login_failures').where('email', '=', email).execute();
}

/**
 * The acting operator proves again that they are who the session says (their
 * `current_password`) before a change that needs a person. The guess counts toward their
 * account's login budget like a login, so a stolen session cannot brute-force the password
 * here. Missing or wrong: 400 validation_failed naming `current_password`; over budget: 429.
 */
export async function confirmCurrentPassword(
  db: Kysely<Database>,
  req: FastifyRequest,
  p: Principal,
  password: string | undefined,
  purpose: string,
) {
  if (password === undefined) invalid([{ field: 'current_password', message: `is required to ${purpose}` }]);
  const attempt = await beginAttempt(db, clientIp(req), p.operator.email);
  const row = await db
    .selectFrom('operators')
    .select('password_hash')
    .where('id', '=', p.operator.id)
    .executeTakeFirstOrThrow();
  if (!(await verifyPassword(row.password_hash, password!))) {
    await audit(db, req, {
      action: 'auth.reauth_failed',
      target_type: 'operator',
      target_id: p.operator.id,
      details: { where: req.routeOptions.url },
    });
    invalid([{ field: 'current_password', message: 'is not your current password' }]);
  }
  // Right: this try was no failure. Earlier wrong ones still count (only a login clears them).
  await forgetAttempt(db, attempt);
}
