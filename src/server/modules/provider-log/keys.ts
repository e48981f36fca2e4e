import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { DB } from '../../db/database.js';
import { initSetting } from '../../db/settings.js';
import { seal, unseal } from '../../secrets/box.js';

// The checkpoints' Ed25519 key pair, made on first use and kept in the settings table (concurrent
// first uses keep one: initSetting), its private key sealed at rest (secrets/box.ts).

const SETTING = 'provider_log_signing_key';

interface StoredKey {
  private_pem: string;
}

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The public key as PEM (SPKI). */
  publicPem: string;
  /** The raw 32-byte public key, base64. */
  publicRaw: string;
  /** The first 16 hex digits of SHA-256 over the raw public key. */
  keyId: string;
}

const loaded = new WeakMap<DB, Promise<SigningKey>>();

/** The key pair (read once per database handle). */
export function signingKey(db: DB): Promise<SigningKey> {
  let k = loaded.get(db);
  if (!k) {
    k = loadSigningKey(db);
    k.catch(() => loaded.delete(db));
    loaded.set(db, k);
  }
  return k;
}

async function loadSigningKey(db: DB): Promise<SigningKey> {
  const fresh = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const stored = await initSetting<StoredKey>(db, SETTING, { private_pem: seal(fresh, 'provider-log-key') });
  const privateKey = createPrivateKey(unseal(stored.private_pem, 'provider-log-key'));
  const publicKey = createPublicKey(privateKey);
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return {
    privateKey,
    publicKey,
    publicPem: publicKey.export({ format: 'pem', type: 'spki' }).toString(),
    publicRaw: raw.toString('base64'),
    keyId: createHash('sha256').update(raw).digest('hex').slice(0, 16),
  };
}
