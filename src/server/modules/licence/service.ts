// The installation id and the licence in force, both kept in the settings table. The stored key
// is re-verified on every read, so a release with another public key shows it as `invalid`.
import { createHash, randomUUID, type KeyObject } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { nowIso } from '../../db/ids.js';
import { HttpProblem, invalid } from '../../http/errors.js';
import { compactKey, decodeLicence, MalformedLicence, type LicencePayload } from './format.js';
import { deleteSetting, initSetting, readSetting, writeSetting } from '../../db/settings.js';
import { audit, type Actor } from '../audit/service.js';

type Db = Kysely<Database>;
const INSTALLATION_KEY = 'installation_id';
const LICENCE_KEY = 'licence';
const DAY_MS = 86_400_000;
const WARN_DAYS = 30;

export type LicenceStatus = 'community' | 'valid' | 'expiring' | 'expired' | 'invalid';

export interface LicenceView {
  installation_id: string;
  status: LicenceStatus;
  licence:
    | (Omit<LicencePayload, 'v' | 'installation_id'> & {
        installation_id: string | null;
        days_left: number;
        installed_at: string;
      })
    | null;
  warning: string | null;
}

interface StoredLicence {
  key: string;
  installed_at: string;
}

/** Made once, on first use. Insert-if-absent then read: concurrent first calls agree on one id. */
export const installationId = (db: Db) => initSetting(db, INSTALLATION_KEY, randomUUID());

const storedLicence = (db: Db) => readSetting<StoredLicence | null>(db, LICENCE_KEY, null);

/** Identifies a key in the audit log without writing the key itself there. */
export const fingerprint = (key: string) => createHash('sha256').update(compactKey(key)).digest('hex').slice(0, 16);

const day = (iso: string) => iso.slice(0, 10);

/**
 * Verifies a key for this installation, or throws the problem that explains the refusal:
 * 400 validation_failed (field `key`) when it is not a licence key at all, licence_invalid for
 * a signature that does not verify, licence_expired, licence_wrong_installation.
 */
export function verifyForInstall(key: string, publicKey: KeyObject, installation: string): LicencePayload {
  let decoded;
  try {
    decoded = decodeLicence(key, publicKey);
  } catch (err) {
    if (err instanceof MalformedLicence) invalid([{ field: 'key', message: err.message }]);
    throw err;
  }
  const p = decoded!.payload;
  if (!decoded!.authentic) {
    throw new HttpProblem(
      400,
      'licence_invalid',
      'The licence key is not signed by the Leadgate vendor key this release trusts: it was altered, or made for another release.',
    );
  }
  if (Date.parse(p.expires_at) <= Date.now()) {
    throw new HttpProblem(
      400,
      'licence_expired',
      `This licence expired on ${day(p.expires_at)}; ask for a renewed key.`,
    );
  }
  if (p.installation_id && p.installation_id !== installation) {
    throw new HttpProblem(
      400,
      'licence_wrong_installation',
      `This licence is for installation ${p.installation_id}; this installation is ${installation}.`,
    );
  }
  return p;
}

export const saveLicence = (db: Db, key: string) =>
  writeSetting(db, LICENCE_KEY, { key: compactKey(key), installed_at: nowIso() } satisfies StoredLicence);

const deleteLicence = (db: Db) => deleteSetting(db, LICENCE_KEY);

/** What the panel shows: the licence in force, judged now. */
export async function licenceView(db: Db, publicKey: KeyObject): Promise<LicenceView> {
  const now = Date.now();
  const installation_id = await installationId(db);
  const stored = await storedLicence(db);
  if (!stored) return { installation_id, status: 'community', licence: null, warning: null };

  let decoded;
  try {
    decoded = decodeLicence(stored.key, publicKey);
  } catch {
    decoded = null;
  }
  const p = decoded?.payload;
  const licence = p
    ? {
        licence_id: p.licence_id,
        holder: p.holder,
        plan: p.plan,
        limits: p.limits,
        issued_at: p.issued_at,
        expires_at: p.expires_at,
        installation_id: p.installation_id ?? null,
        days_left: Math.max(0, Math.ceil((Date.parse(p.expires_at) - now) / DAY_MS)),
        installed_at: stored.installed_at,
      }
    : null;
  if (!decoded?.authentic || !p || (p.installation_id && p.installation_id !== installation_id)) {
    return {
      installation_id,
      status: 'invalid',
      licence,
      warning:
        'The installed licence key does not verify with this release (altered, made for another release or installation). The community plan applies; install a valid key.',
    };
  }
  const left = Date.parse(p.expires_at) - now;
  if (left <= 0) {
    return {
      installation_id,
      status: 'expired',
      licence,
      warning: `The licence expired on ${day(p.expires_at)}. Nothing stops working; install a renewed key.`,
    };
  }
  if (left <= WARN_DAYS * DAY_MS) {
    const n = licence!.days_left;
    return {
      installation_id,
      status: 'expiring',
      licence,
      warning: `The licence expires in ${n} day${n === 1 ? '' : 's'}, on ${day(p.expires_at)}. Install a renewed key before then.`,
    };
  }
  return { installation_id, status: 'valid', licence, warning: null };
}

// The use cases behind the licence panel; each answers the panel's view afterwards.

/** Installs a key that verifies for this installation; a refused one leaves the licence in force. */
export async function installLicence(db: Db, actor: Actor, key: string, publicKey: KeyObject) {
  const p = verifyForInstall(key, publicKey, await installationId(db));
  await db.transaction().execute(async (tx) => {
    await saveLicence(tx, key);
    await audit(tx, actor, {
      action: 'licence.installed',
      target_type: 'licence',
      target_id: p.licence_id,
      details: { holder: p.holder, plan: p.plan, expires_at: p.expires_at, key_sha256: fingerprint(key) },
    });
  });
  return licenceView(db, publicKey);
}

/** Back to the community plan (audited when there was a licence). */
export async function removeLicence(db: Db, actor: Actor, publicKey: KeyObject) {
  await db.transaction().execute(async (tx) => {
    if (await deleteLicence(tx)) await audit(tx, actor, { action: 'licence.removed', target_type: 'licence' });
  });
  return licenceView(db, publicKey);
}
