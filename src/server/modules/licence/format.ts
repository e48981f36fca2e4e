// The licence key format, shared by the server (verify) and `npm run licence` (sign):
//
//   LG1.<base64url(JSON payload)>.<base64url(Ed25519 signature)>
//
// The signature covers the ASCII text "LG1.<payload part>", prefix included, so a signature
// can never be replayed under another format version. Verification is offline: only the
// public key built into the release (or LICENCE_PUBLIC_KEY) is needed.
import { createPrivateKey, sign, verify, type KeyObject } from 'node:crypto';

export const KEY_PREFIX = 'LG1';

export interface LicencePayload {
  v: 1;
  licence_id: string;
  holder: string;
  plan: string;
  /** Informational: nothing in the product is limited by a licence. */
  limits: Record<string, number>;
  issued_at: string;
  expires_at: string;
  /** When set, the licence is only accepted by the installation with this id. */
  installation_id?: string;
}

/** A key that is not a well-formed licence document (the caller names the field). */
export class MalformedLicence extends Error {}

const B64URL = /^[A-Za-z0-9_-]+$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const LIMIT_NAME = /^[a-z][a-z0-9_]{0,39}$/;
export const MAX_KEY_LENGTH = 8192;

const isIso = (s: unknown): s is string => typeof s === 'string' && ISO.test(s) && !Number.isNaN(Date.parse(s));
const text = (s: unknown, max: number): s is string => typeof s === 'string' && s.trim().length > 0 && s.length <= max;

/** What is wrong with a payload, or null: the same rules when issuing and when installing. */
export function payloadProblem(p: Record<string, unknown>): string | null {
  if (p.v !== 1) return `has format version ${JSON.stringify(p.v)}; this release reads version 1`;
  if (!text(p.licence_id, 100)) return 'has no licence_id';
  if (!text(p.holder, 200)) return 'has no holder (1 to 200 characters)';
  if (!text(p.plan, 40)) return 'has no plan (1 to 40 characters)';
  if (!isIso(p.issued_at)) return 'has no valid issued_at timestamp';
  if (!isIso(p.expires_at)) return 'has no valid expires_at timestamp';
  if (Date.parse(p.expires_at) <= Date.parse(p.issued_at)) return 'expires before it was issued';
  if (p.installation_id !== undefined && (typeof p.installation_id !== 'string' || !UUID.test(p.installation_id))) {
    return 'has an installation_id that is not a UUID';
  }
  const limits = p.limits;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) return 'has no limits object';
  for (const [name, value] of Object.entries(limits)) {
    if (!LIMIT_NAME.test(name)) return `has a limit with a bad name "${name}" (lower-case letters, digits, _)`;
    if (!Number.isSafeInteger(value) || (value as number) < 0)
      return `has limit ${name} that is not a whole number ≥ 0`;
  }
  const known = new Set(['v', 'licence_id', 'holder', 'plan', 'limits', 'issued_at', 'expires_at', 'installation_id']);
  const extra = Object.keys(p).find((k) => !known.has(k));
  if (extra) return `has an unknown field "${extra}"`;
  return null;
}

export function signLicence(payload: LicencePayload, privateKey: KeyObject): string {
  const problem = payloadProblem(payload as unknown as Record<string, unknown>);
  if (problem) throw new MalformedLicence(`The licence ${problem}.`);
  const signed = `${KEY_PREFIX}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${signed}.${sign(null, Buffer.from(signed), privateKey).toString('base64url')}`;
}

export interface DecodedLicence {
  payload: LicencePayload;
  /** The signature verified against the given public key. */
  authentic: boolean;
}

/** A key as pasted, without the whitespace of e-mail wrapping: the form stored and fingerprinted. */
export const compactKey = (raw: string) => raw.replace(/\s+/g, '');

/**
 * Decodes a key and checks its signature. Throws MalformedLicence when it is not a licence key
 * at all; a well-formed key with a wrong signature comes back with authentic: false.
 * Whitespace is ignored: keys pasted from e-mail arrive wrapped.
 */
export function decodeLicence(raw: string, publicKey: KeyObject): DecodedLicence {
  const key = compactKey(raw);
  const parts = key.split('.');
  if (parts.length !== 3 || parts[0] !== KEY_PREFIX || !B64URL.test(parts[1]) || !B64URL.test(parts[2])) {
    throw new MalformedLicence(`is not a Leadgate licence key (expected ${KEY_PREFIX}.<payload>.<signature>)`);
  }
  let payload: unknown;
  try {
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'));
  } catch {
    throw new MalformedLicence('has a payload that does not decode; was the key copied in full?');
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw new MalformedLicence('has a payload that is not an object');
  const problem = payloadProblem(payload as Record<string, unknown>);
  if (problem) throw new MalformedLicence(problem);
  const signature = Buffer.from(parts[2], 'base64url');
  const authentic =
    signature.length === 64 && verify(null, Buffer.from(`${parts[0]}.${parts[1]}`), publicKey, signature);
  return { payload: payload as LicencePayload, authentic };
}

export function parsePrivateKey(pem: string): KeyObject {
  const key = createPrivateKey(pem);
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`is a ${key.asymmetricKeyType} key, not Ed25519`);
  return key;
}
