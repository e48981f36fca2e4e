// The licence verification key, read by config.ts at start-up (config imports no feature, so
// this lives beside it): the vendor's public key built into the release, or LICENCE_PUBLIC_KEY.
import { createPublicKey, type KeyObject } from 'node:crypto';

// The vendor's licence public key, built into the release. Its private half is kept by the
// vendor outside the repository (made with `npm run licence -- keygen`). LICENCE_PUBLIC_KEY
// overrides it (tests sign with their own pair).
export const BUILT_IN_PUBLIC_KEY = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAWaaPfR9SszdqnOjxUmTGcruSsA61YLXbzn1nuDpRIrU=
-----END PUBLIC KEY-----`;

/** An Ed25519 public key from PEM (real or "\n"-escaped newlines) or base64 of its DER SPKI. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim().replace(/\\n/g, '\n');
  let key: KeyObject;
  try {
    key = trimmed.startsWith('-----BEGIN')
      ? createPublicKey(trimmed)
      : createPublicKey({ key: Buffer.from(trimmed, 'base64'), format: 'der', type: 'spki' });
  } catch {
    throw new Error('does not decode as a public key');
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`is a ${key.asymmetricKeyType} key, not Ed25519`);
  return key;
}
