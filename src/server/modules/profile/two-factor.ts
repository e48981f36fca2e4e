import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { hashSecret } from '../../auth/credentials.js';
import { base32Encode, matchStep, newSecret } from '../../auth/totp.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { conflict, invalid } from '../../http/errors.js';
import { seal, unseal } from '../../secrets/box.js';

// Two-factor sign-in: the seed, the replay guard and the recovery codes. Routes (profile and
// login) call these; none of them ever returns or logs a code after it is shown once.

type Db = Kysely<Database>;

const RECOVERY_CODE_COUNT = 10;

/** "abcde-fghij": 50 random bits in the base32 alphabet, so no 0/O or 1/l to misread. */
function newRecoveryCode(): string {
  const s = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase();
  return `${s.slice(0, 5)}-${s.slice(5)}`;
}

/** What people type: any case, with or without the dash or spaces. */
const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[^a-z2-7]/g, '');

const hashRecoveryCode = (code: string) => hashSecret(normalizeRecoveryCode(code));

const isTotpCode = (code: string) => /^\d{6}$/.test(code.replace(/\s/g, ''));

export async function twoFactorStatus(db: Db, operatorId: string) {
  const op = await db
    .selectFrom('operators')
    .select('totp_secret')
    .where('id', '=', operatorId)
    .executeTakeFirstOrThrow();
  const left = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('operator_id', '=', operatorId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return { enabled: op.totp_secret !== null, recovery_codes_left: op.totp_secret !== null ? Number(left.n) : 0 };
}

/** A fresh pending seed; an earlier unconfirmed one is replaced. 409 while 2FA is on. */
export async function startEnrolment(db: Db, operatorId: string): Promise<string> {
  const secret = newSecret();
  const res = await db
    .updateTable('operators')
    .set({ totp_pending_secret: seal(secret, 'totp-seed') })
    .where('id', '=', operatorId)
    .where('totp_secret', 'is', null)
    .executeTakeFirst();
  if (res.numUpdatedRows === 0n) conflict('Two-factor sign-in is already on; disable it first to enrol a new device.');
  return secret;
}

/** Replaces the operator's recovery codes with ten new ones; returns them in clear, once. */
export async function replaceRecoveryCodes(db: Db, operatorId: string): Promise<string[]> {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const now = nowIso();
  await db.deleteFrom('recovery_codes').where('operator_id', '=', operatorId).execute();
  await db
    .insertInto('recovery_codes')
    .values(
      codes.map((c) => ({
        id: newId(),
        operator_id: operatorId,
        code_hash: hashRecoveryCode(c),
        created_at: now,
        used_at: null,
      })),
    )
    .execute();
  return codes;
}

/**
 * Turns 2FA on when `code` matches the pending seed. Call inside a transaction. 400 naming
 * `code` when it does not match; 409 when there is nothing to confirm.
 */
export async function confirmEnrolment(tx: Db, operatorId: string, code: string): Promise<string[]> {
  const op = await tx
    .selectFrom('operators')
    .select(['totp_secret', 'totp_pending_secret'])
    .where('id', '=', operatorId)
    .executeTakeFirstOrThrow();
  if (op.totp_secret !== null) conflict('Two-factor sign-in is already on.');
  if (op.totp_pending_secret === null) conflict('Start the enrolment first: there is no pending secret to confirm.');
  const step = matchStep(unseal(op.totp_pending_secret!, 'totp-seed'), code.replace(/\s/g, ''));
  if (step === null)
    invalid([{ field: 'code', message: 'does not match the secret; check the device clock and try the current code' }]);
  const res = await tx
    .updateTable('operators')
    .set({ totp_secret: op.totp_pending_secret, totp_pending_secret: null, totp_last_step: step, updated_at: nowIso() })
    .where('id', '=', operatorId)
    .where('totp_pending_secret', '=', op.totp_pending_secret)
    .executeTakeFirst();
  // A concurrent enrolment replaced the seed this code was made from.
  if (res.numUpdatedRows === 0n) conflict('The enrolment changed meanwhile; start again.');
  return replaceRecoveryCodes(tx, operatorId);
}

/**
 * Spends a second factor: a TOTP code newer than the last one accepted, or an unused recovery
 * code. Both updates are conditional, so two requests racing with one code cannot both win.
 * Returns which kind was spent, or null (wrong, reused, or 2FA off).
 */
export async function spendCode(
  db: Db,
  operatorId: string,
  code: string,
  kind: 'totp' | 'recovery' = isTotpCode(code) ? 'totp' : 'recovery',
): Promise<'totp' | 'recovery' | null> {
  const op = await db
    .selectFrom('operators')
    .select(['totp_secret', 'totp_last_step'])
    .where('id', '=', operatorId)
    .executeTakeFirstOrThrow();
  if (op.totp_secret === null) return null;
  if (kind === 'totp') {
    const step = matchStep(unseal(op.totp_secret, 'totp-seed'), code.replace(/\s/g, ''));
    if (step === null || (op.totp_last_step !== null && step <= op.totp_last_step)) return null;
    const res = await db
      .updateTable('operators')
      .set({ totp_last_step: step })
      .where('id', '=', operatorId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return res.numUpdatedRows > 0n ? 'totp' : null;
  }
  const normalized = normalizeRecoveryCode(code);
  if (normalized.length !== 10) return null;
  const row = await db
    .selectFrom('recovery_codes')
    .select('id')
    .where('operator_id', '=', operatorId)
    .where('code_hash', '=', hashSecret(normalized))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  if (!row) return null;
  const res = await db
    .updateTable('recovery_codes')
    .set({ used_at: nowIso() })
    .where('id', '=', row.id)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return res.numUpdatedRows > 0n ? 'recovery' : null;
}

export async function disableTwoFactor(tx: Db, operatorId: string) {
  await tx
    .updateTable('operators')
    .set({ totp_secret: null, totp_pending_secret: null, totp_last_step: null, updated_at: nowIso() })
    .where('id', '=', operatorId)
    .execute();
  await tx.deleteFrom('recovery_codes').where('operator_id', '=', operatorId).execute();
}
