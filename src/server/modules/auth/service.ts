import { issueToken } from '../../auth/credentials.js';
import { verifyPassword } from '../../auth/passwords.js';
import type { DB } from '../../db/database.js';
import { namesOf } from '../../db/names.js';
import { newId, nowIso } from '../../db/ids.js';
import { conflict, HttpProblem, invalid } from '../../http/errors.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { findOperator } from '../operators/queries.js';
import { createOwner, ownerExists } from '../operators/service.js';
import { createPortalSession, judgeProviderLogin, portalWhoami, providerLoginRow } from '../portal/sign-in.js';
import { spendCode } from '../profile/two-factor.js';
import {
  deleteAccountAttempts,
  deleteAttempt,
  deleteAttemptsBefore,
  deleteSession,
  findApiKeyInfo,
  insertAttempt,
  insertSession,
  loginRow,
  otherAttemptAt,
  passwordHashOf,
} from './queries.js';

export async function createSession(db: DB, operatorId: string, ip: string, userAgent: string, idleMinutes: number) {
  const { id, token, secretHash } = issueToken('lgs_');
  const now = nowIso();
  await insertSession(db, {
    id,
    secret_hash: secretHash,
    operator_id: operatorId,
    created_at: now,
    last_seen_at: now,
    ip,
    user_agent: userAgent.slice(0, 300),
  });
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
async function freeAt(db: DB, column: 'ip' | 'email', value: string, since: string, exceptId: string, max: number) {
  const at = await otherAttemptAt(db, column, value, since, exceptId, max - 1);
  return at !== null ? Date.parse(at) + LOGIN_WINDOW_MS : null;
}

/**
 * Counts an attempt for `email` from `ip` before it is judged; 429 rate_limited with Retry-After
 * (and nothing counted) when the account or the address is over its failure budget.
 */
export async function beginAttempt(db: DB, ip: string, email: string): Promise<Attempt> {
  const attempt = { id: newId(), email, ip };
  const now = Date.now();
  await insertAttempt(db, { id: attempt.id, at: new Date(now).toISOString(), ip, email });
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
  await deleteAttemptsBefore(db, email, ip, new Date(now - LOGIN_WINDOW_MS).toISOString());
  return attempt;
}

/** The attempt was not a failure after all (e.g. a right password still waiting for its code). */
export async function forgetAttempt(db: DB, attempt: Attempt) {
  await deleteAttempt(db, attempt.id);
}

/** A successful login: the account's failures (this attempt among them) stop counting. */
export async function clearFailures(db: DB, email: string) {
  await deleteAccountAttempts(db, email);
}

/** The address of the request a use case here runs for (never the server's own work). */
export function addressOf(actor: Actor): string {
  if (actor.ip === null) throw new Error('a sign-in use case without a request address');
  return actor.ip;
}

/**
 * The acting operator proves again that they are who the session says (their
 * `current_password`) before a change that needs a person. The guess counts toward their
 * account's login budget like a login, so a stolen session cannot brute-force the password
 * here. Missing or wrong: 400 validation_failed naming `current_password`; over budget: 429.
 * `where` (the route) goes into the audit record of a wrong guess.
 */
export async function confirmPassword(
  db: DB,
  actor: Actor,
  password: string | undefined,
  purpose: string,
  where: string | undefined,
) {
  const p = principalOf(actor);
  if (password === undefined) invalid([{ field: 'current_password', message: `is required to ${purpose}` }]);
  const attempt = await beginAttempt(db, addressOf(actor), p.operator.email);
  if (!(await verifyPassword(await passwordHashOf(db, p.operator.id), password!))) {
    await audit(db, actor, {
      action: 'auth.reauth_failed',
      target_type: 'operator',
      target_id: p.operator.id,
      details: { where },
    });
    invalid([{ field: 'current_password', message: 'is not your current password' }]);
  }
  // Right: this try was no failure. Earlier wrong ones still count (only a login clears them).
  await forgetAttempt(db, attempt);
}

// The use cases behind the auth routes.

export interface LoginInput {
  email: string;
  password: string;
  totp_code?: string;
  recovery_code?: string;
}

/**
 * A dashboard session for a right email and password (and second factor when on), counted
 * against the login budget before it is judged; 401 for any wrong one alike.
 */
export async function login(db: DB, actor: Actor, input: LoginInput, userAgent: string, idleMinutes: number) {
  const { totp_code, recovery_code } = input;
  if (totp_code !== undefined && recovery_code !== undefined)
    invalid([{ field: 'recovery_code', message: 'goes instead of totp_code, not with it' }]);
  const email = input.email.trim().toLowerCase();
  const ip = addressOf(actor);
  // Counted before it is judged (see beginAttempt): a failure is this row left in place.
  const attempt = await beginAttempt(db, ip, email);
  const row = await loginRow(db, email);
  if (!row) {
    // A traffic provider's user signs in on the same page, into its portal (modules/portal).
    const provider = await providerLoginRow(db, email);
    if (provider) {
      if ((await judgeProviderLogin(db, actor, provider, { ...input, email })) === 'totp_required') {
        await forgetAttempt(db, attempt);
        throw new HttpProblem(401, 'totp_required', 'Enter the 6-digit code from your authenticator app.');
      }
      await clearFailures(db, email);
      const session = await createPortalSession(db, provider, ip, userAgent, idleMinutes);
      return { ...session, kind: 'provider' as const, portal: await portalWhoami(db, provider.id) };
    }
  }
  const ok = await verifyPassword(row?.password_hash ?? null, input.password);
  if (!row || !ok || row.status !== 'active') {
    await audit(db, actor, {
      action: 'auth.login_failed',
      actor: { id: row?.id ?? null, email },
      details: { reason: !row ? 'unknown_email' : !ok ? 'wrong_password' : 'operator_disabled' },
    });
    throw new HttpProblem(401, 'unauthorized', 'Wrong email or password.');
  }
  // Before clearFailures: a right password alone must not reset the count of wrong codes.
  if (row.totp_secret !== null) {
    if (totp_code === undefined && recovery_code === undefined) {
      await forgetAttempt(db, attempt); // a right password is no failure, nor a reset
      throw new HttpProblem(
        401,
        'totp_required',
        'Enter the 6-digit code from your authenticator app, or a recovery code.',
      );
    }
    const kind = totp_code !== undefined ? 'totp' : 'recovery';
    if (!(await spendCode(db, row.id, totp_code ?? recovery_code!, kind))) {
      await audit(db, actor, { action: 'auth.totp_failed', actor: { id: row.id, email }, details: { kind } });
      throw new HttpProblem(401, 'unauthorized', 'The two-factor code is wrong or already used.');
    }
  }
  await clearFailures(db, email);
  const session = await createSession(db, row.id, ip, userAgent, idleMinutes);
  await audit(db, actor, { action: 'auth.login', actor: { id: row.id, email } });
  return { ...session, kind: 'operator' as const, operator: (await findOperator(db, row.id))! };
}

/** Ends the actor's session. */
export async function logout(db: DB, actor: Actor) {
  await deleteSession(db, principalOf(actor).sessionId!);
  await audit(db, actor, { action: 'auth.logout' });
}

/** The caller: operator, credential, effective permissions and whose data its role reads. */
export async function whoami(db: DB, actor: Actor) {
  const p = principalOf(actor);
  const key = p.apiKeyId ? await findApiKeyInfo(db, p.apiKeyId) : undefined;
  // Names, so the dashboard can say whose data the role shows (ids of deleted records are kept).
  const named = async (type: 'traffic_provider' | 'partner', ids: readonly string[] | null) => {
    if (ids === null) return null;
    const names = await namesOf(db, type, [...ids]);
    return ids.map((id) => ({ id, name: names.get(id) ?? null }));
  };
  return {
    operator: (await findOperator(db, p.operator.id))!,
    via: p.via,
    admin: p.isAdmin,
    permissions: [...p.permissions].sort(),
    api_key: key ? { ...key, scopes: JSON.parse(key.scopes) as string[] } : null,
    scope: {
      traffic_providers: await named('traffic_provider', p.scope.trafficProviderIds),
      partners: await named('partner', p.scope.partnerIds),
    },
  };
}

/** First-run setup: the owner (admin), signed in; 409 once any operator exists. */
export async function completeSetup(
  db: DB,
  actor: Actor,
  owner: { email: string; name: string; password: string },
  userAgent: string,
  idleMinutes: number,
) {
  const id = await createOwner(db, owner);
  if (!id) conflict('Setup is already done; log in instead.');
  await audit(db, actor, {
    action: 'operator.created',
    actor: { id, email: owner.email.toLowerCase() },
    target_type: 'operator',
    target_id: id!,
    details: { via: 'setup' },
  });
  const session = await createSession(db, id!, addressOf(actor), userAgent, idleMinutes);
  return { ...session, kind: 'operator' as const, operator: (await findOperator(db, id!))! };
}

/** Whether first-run setup is still needed: no operator yet. */
export const setupNeeded = async (db: DB) => !(await ownerExists(db));
