// Two-factor sign-in for a traffic provider's user (issue 27), as operators have it: an
// authenticator app (RFC 6238). Enrol (a pending secret, shown once), confirm with a current code,
// turn off with the password. Sign-in asks for the code once it is on (sign-in.ts). Recovery codes
// are the operators' alone for now: a provider user who loses the device asks its account
// manager, who disables and re-invites it.
import { verifyPassword } from '../../auth/passwords.js';
import { matchStep, newSecret, otpauthUri } from '../../auth/totp.js';
import type { DB } from '../../db/database.js';
import { conflict, HttpProblem, invalid } from '../../http/errors.js';
import { audit, providerOf, type Actor } from '../audit/service.js';
import { addressOf, beginAttempt, forgetAttempt } from '../auth/service.js';
import { disableTotp, enableTotp, setPendingSecret, totpRow } from './queries.js';
import { unseal } from '../../secrets/box.js';

function ownUser(actor: Actor) {
  const p = providerOf(actor);
  if (p.via !== 'session' || p.viewAs)
    throw new HttpProblem(403, 'session_required', "Two-factor sign-in is set from the user's own signed-in session.");
  return p;
}

/** A fresh pending secret (an earlier unconfirmed one is replaced); 409 while two-factor is on. */
export async function startPortalTwoFactor(db: DB, actor: Actor) {
  const p = ownUser(actor);
  const secret = newSecret();
  if (!(await setPendingSecret(db, p.user.id, secret)))
    conflict('Two-factor sign-in is already on; turn it off first to enrol a new device.');
  return { secret, otpauth_uri: otpauthUri(secret, p.user.email) };
}

/** Turns two-factor on when `code` matches the pending secret (400 naming `code` otherwise). */
export async function confirmPortalTwoFactor(db: DB, actor: Actor, code: string) {
  const p = ownUser(actor);
  const row = await totpRow(db, p.user.id);
  if (row.totp_secret !== null) conflict('Two-factor sign-in is already on.');
  if (row.totp_pending_secret === null) conflict('Start the enrolment first: there is no pending secret to confirm.');
  const step = matchStep(unseal(row.totp_pending_secret!, 'totp-seed'), code.replace(/\s/g, ''));
  if (step === null)
    invalid([{ field: 'code', message: 'does not match the secret; check the device clock and try the current code' }]);
  await db.transaction().execute(async (tx) => {
    if (!(await enableTotp(tx, p.user.id, row.totp_pending_secret!, step!)))
      conflict('The enrolment changed meanwhile; start again.');
    await audit(tx, actor, { action: 'portal.2fa_enabled', target_type: 'provider_user', target_id: p.user.id });
  });
  return { enabled: true };
}

/** Turns two-factor off with the user's password, counted like a sign-in. */
export async function disablePortalTwoFactor(db: DB, actor: Actor, password: string) {
  const p = ownUser(actor);
  const row = await totpRow(db, p.user.id);
  const attempt = await beginAttempt(db, addressOf(actor), row.email);
  if (!(await verifyPassword(row.password_hash, password)))
    invalid([{ field: 'current_password', message: 'is not your current password' }]);
  await forgetAttempt(db, attempt);
  await db.transaction().execute(async (tx) => {
    await disableTotp(tx, p.user.id);
    await audit(tx, actor, { action: 'portal.2fa_disabled', target_type: 'provider_user', target_id: p.user.id });
  });
  return { enabled: false };
}
