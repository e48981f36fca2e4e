// A traffic provider's user signing in (issue 27): the same sign-in page and POST /api/auth/login
// as operators, the same throttling (the attempt was counted before this runs: auth/service.ts),
// the same session lifetimes, and a portal session (lgps_…) that opens /api/portal/ only.
import { issueToken } from '../../auth/credentials.js';
import { verifyPassword } from '../../auth/passwords.js';
import { matchStep } from '../../auth/totp.js';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { HttpProblem } from '../../http/errors.js';
import { audit, type Actor } from '../audit/service.js';
import { insertPortalSession, patchProviderUser, providerLoginRow, spendTotpStep } from '../provider-users/queries.js';
import { userWithProvider } from './queries.js';
import { unseal } from '../../secrets/box.js';

export type ProviderLoginRow = NonNullable<Awaited<ReturnType<typeof providerLoginRow>>>;
export { providerLoginRow };

export async function createPortalSession(
  db: DB,
  user: { id: string; traffic_provider_id: string },
  ip: string,
  userAgent: string,
  idleMinutes: number,
) {
  const { id, token, secretHash } = issueToken('lgps_');
  const now = nowIso();
  await insertPortalSession(db, {
    id,
    secret_hash: secretHash,
    traffic_provider_id: user.traffic_provider_id,
    provider_user_id: user.id,
    viewer_operator_id: null,
    created_at: now,
    last_seen_at: now,
    ip,
    user_agent: userAgent.slice(0, 300),
  });
  return { token, expires_at: new Date(Date.now() + idleMinutes * 60_000).toISOString() };
}

/**
 * Judges a provider user's password (and code), after the attempt was counted. Returns whether
 * the password was right but a code is still missing ('totp_required'), or signs in. Throws 401
 * alike for every wrong answer, as for operators.
 */
export async function judgeProviderLogin(
  db: DB,
  actor: Actor,
  row: ProviderLoginRow,
  input: { email: string; password: string; totp_code?: string; recovery_code?: string },
): Promise<'totp_required' | 'ok'> {
  const ok = await verifyPassword(row.password_hash, input.password);
  const open = row.status === 'active' && Number(row.portal_enabled) === 1 && row.archived_at === null;
  if (!ok || !open) {
    await audit(db, actor, {
      action: 'auth.login_failed',
      actor: { id: row.id, email: input.email },
      actorKind: 'provider_user',
      details: { reason: !ok ? 'wrong_password' : row.status !== 'active' ? 'user_disabled' : 'portal_closed' },
    });
    throw new HttpProblem(401, 'unauthorized', 'Wrong email or password.');
  }
  if (row.totp_secret !== null) {
    if (input.totp_code === undefined && input.recovery_code === undefined) return 'totp_required';
    const step =
      input.totp_code !== undefined ? matchStep(unseal(row.totp_secret, 'totp-seed'), input.totp_code) : null;
    const spent =
      step !== null &&
      (row.totp_last_step === null || step > row.totp_last_step) &&
      (await spendTotpStep(db, row.id, step));
    if (!spent) {
      await audit(db, actor, {
        action: 'auth.totp_failed',
        actor: { id: row.id, email: input.email },
        actorKind: 'provider_user',
        details: { kind: input.totp_code !== undefined ? 'totp' : 'recovery' },
      });
      throw new HttpProblem(401, 'unauthorized', 'The two-factor code is wrong or already used.');
    }
  }
  await patchProviderUser(db, row.id, { last_login_at: nowIso() });
  await audit(db, actor, {
    action: 'portal.login',
    actor: { id: row.id, email: input.email },
    actorKind: 'provider_user',
  });
  return 'ok';
}

/** What the portal shows about its signed-in user and provider (by user id). */
export async function portalWhoami(db: DB, userId: string) {
  const u = await userWithProvider(db, userId);
  return {
    user: { id: u.id, email: u.email, name: u.name, timezone: u.timezone, two_factor: u.totp_secret !== null },
    traffic_provider: { id: u.provider_id, name: u.provider_name },
  };
}
