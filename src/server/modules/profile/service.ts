import QRCode from 'qrcode';
import { hashPassword } from '../../auth/passwords.js';
import { otpauthUri } from '../../auth/totp.js';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { conflict, invalid, notFound } from '../../http/errors.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { principalOf } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { addressOf, beginAttempt, confirmPassword, forgetAttempt } from '../auth/service.js';
import { findOperator } from '../operators/queries.js';
import { assertTimezone } from '../operators/service.js';
import { deleteOtherSessions, deleteOwnSession, emailTaken, liveSessions, updateOwnOperator } from './queries.js';
import {
  confirmEnrolment,
  disableTwoFactor,
  replaceRecoveryCodes,
  spendCode,
  startEnrolment,
  twoFactorStatus,
} from './two-factor.js';

// The signed-in operator's own profile: name, time zone, email, password, two-factor sign-in.
// `where` (the route) goes into the audit record of a wrong password or code.

const profileOf = async (db: DB, id: string, permissions: Iterable<string>) => ({
  operator: (await findOperator(db, id))!,
  permissions: [...permissions].sort(),
  two_factor: await twoFactorStatus(db, id),
});

export async function getProfile(db: DB, actor: Actor) {
  const p = principalOf(actor);
  return profileOf(db, p.operator.id, p.rolePermissions);
}

/** A new email needs the current password and must be free. */
export async function updateProfile(
  db: DB,
  actor: Actor,
  b: { name?: string; timezone?: string; email?: string; current_password?: string },
  where: string | undefined,
) {
  const p = principalOf(actor);
  const { name, timezone, current_password } = b;
  assertTimezone(timezone);
  const email = b.email?.trim().toLowerCase();
  const newEmail = email !== undefined && email !== p.operator.email ? email : undefined;
  if (newEmail !== undefined) {
    await confirmPassword(db, actor, current_password, 'change your email', where);
    if (await emailTaken(db, newEmail)) conflict(`Another operator already signs in with ${newEmail}.`);
  }
  await db.transaction().execute(async (tx) => {
    await updateOwnOperator(tx, p.operator.id, {
      ...(name !== undefined ? { name: name.trim() } : {}),
      ...(timezone !== undefined ? { timezone } : {}),
      ...(newEmail !== undefined ? { email: newEmail } : {}),
      updated_at: nowIso(),
    });
    if (newEmail !== undefined) {
      await audit(tx, actor, {
        action: 'profile.email_changed',
        target_type: 'operator',
        target_id: p.operator.id,
        details: { from: p.operator.email, to: newEmail },
      });
    }
  });
  return profileOf(db, p.operator.id, p.rolePermissions);
}

/** A new password, after the current one; every other session of the operator ends. */
export async function changePassword(
  db: DB,
  actor: Actor,
  currentPassword: string,
  newPassword: string,
  where: string | undefined,
) {
  const p = principalOf(actor);
  await confirmPassword(db, actor, currentPassword, 'change your password', where);
  const password_hash = await hashPassword(newPassword);
  await db.transaction().execute(async (tx) => {
    await updateOwnOperator(tx, p.operator.id, { password_hash, updated_at: nowIso() });
    await deleteOtherSessions(tx, p.operator.id, p.sessionId!);
    await audit(tx, actor, { action: 'profile.password_changed', target_type: 'operator', target_id: p.operator.id });
  });
}

/**
 * Spends a second factor of the actor's or refuses (409 while 2FA is off, 400 naming `code`).
 * Wrong codes count toward the account's login rate limit, so a stolen session cannot guess its
 * way to turning 2FA off.
 */
async function spendOrRefuse(db: DB, actor: Actor, code: string, where: string | undefined) {
  const p = principalOf(actor);
  if (!(await twoFactorStatus(db, p.operator.id)).enabled) conflict('Two-factor sign-in is not on.');
  // Counted before it is judged, like a login (see beginAttempt), so concurrent guesses cannot
  // all slip under the budget.
  const attempt = await beginAttempt(db, addressOf(actor), p.operator.email);
  const kind = await spendCode(db, p.operator.id, code);
  if (!kind) {
    await audit(db, actor, {
      action: 'auth.totp_failed',
      target_type: 'operator',
      target_id: p.operator.id,
      details: { where },
    });
    invalid([{ field: 'code', message: 'is wrong or already used' }]);
  }
  await forgetAttempt(db, attempt);
  return kind!;
}

/** A new pending secret, with its otpauth URI and that as a QR code (an SVG data: URL). */
export async function enrolTwoFactor(db: DB, actor: Actor) {
  const p = principalOf(actor);
  const secret = await startEnrolment(db, p.operator.id);
  const uri = otpauthUri(secret, p.operator.email);
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return { secret, otpauth_uri: uri, qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
}

/** Turns 2FA on with a code from the pending secret; the recovery codes, shown this once. */
export async function confirmTwoFactor(db: DB, actor: Actor, code: string) {
  const p = principalOf(actor);
  const codes = await db.transaction().execute(async (tx) => {
    const codes = await confirmEnrolment(tx, p.operator.id, code);
    await audit(tx, actor, { action: 'profile.2fa_enabled', target_type: 'operator', target_id: p.operator.id });
    return codes;
  });
  return { recovery_codes: codes };
}

/** Turns 2FA off, with a current code or a recovery code. */
export async function turnOffTwoFactor(db: DB, actor: Actor, code: string, where: string | undefined) {
  const p = principalOf(actor);
  const kind = await spendOrRefuse(db, actor, code, where);
  await db.transaction().execute(async (tx) => {
    await disableTwoFactor(tx, p.operator.id);
    await audit(tx, actor, {
      action: 'profile.2fa_disabled',
      target_type: 'operator',
      target_id: p.operator.id,
      details: { with: kind },
    });
  });
}

/** Ten new recovery codes for a current code or a recovery code; the old ones stop working. */
export async function regenerateRecoveryCodes(db: DB, actor: Actor, code: string, where: string | undefined) {
  const p = principalOf(actor);
  await spendOrRefuse(db, actor, code, where);
  const codes = await db.transaction().execute(async (tx) => {
    const codes = await replaceRecoveryCodes(tx, p.operator.id);
    await audit(tx, actor, {
      action: 'profile.recovery_codes_replaced',
      target_type: 'operator',
      target_id: p.operator.id,
    });
    return codes;
  });
  return { recovery_codes: codes };
}

// Sessions: one's own, listed and signed out.

// Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari", Android says "Linux".
const BROWSERS: [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/HeadlessChrome\//, 'Headless Chrome'],
  [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** A short, human "Chrome on Linux" from a User-Agent; good enough to recognise a device. */
export function deviceOf(userAgent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? (userAgent ? 'Unknown device' : 'Unknown client');
}

/** The actor's live sessions (idle past `idleMinutes` have ended), newest sign-in first. */
export async function listMySessions(
  db: DB,
  actor: Actor,
  query: { limit: number; cursor?: string },
  idleMinutes: number,
) {
  const p = principalOf(actor);
  const { limit, cursor } = query;
  const after = decodeCursor(cursor, ['created_at', 'id']);
  const since = new Date(Date.now() - idleMinutes * 60_000).toISOString();
  const rows = await liveSessions(db, p.operator.id, since, after, limit);
  const page = pageOf(rows, limit, (r) => ({ created_at: r.created_at, id: r.id }));
  return {
    ...page,
    data: page.data.map((r) => ({ ...r, device: deviceOf(r.user_agent), current: r.id === p.sessionId })),
  };
}

/** Signs out one of the actor's sessions (this one too); 404 for anyone else's. */
export async function revokeMySession(db: DB, actor: Actor, id: string) {
  if (!(await deleteOwnSession(db, principalOf(actor).operator.id, id))) notFound('session');
  await audit(db, actor, { action: 'profile.session_revoked', target_type: 'session', target_id: id });
}

/** Signs out every session of the actor's but this one. */
export async function revokeMyOtherSessions(db: DB, actor: Actor) {
  const p = principalOf(actor);
  const revoked = await deleteOtherSessions(db, p.operator.id, p.sessionId!);
  await audit(db, actor, { action: 'profile.sessions_revoked', details: { revoked } });
  return { revoked };
}
