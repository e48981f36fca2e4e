import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

// Secrets at rest (issue 29): the values Leadgate must read back in clear to use them (partners'
// header values, status pulls' request headers, webhook signing secrets, the checkpoint signing
// key, the tracked links' key, two-factor seeds) are stored sealed with AES-256-GCM:
//
//   lgsec1:<key id>:<base64url of 12-byte IV ‖ ciphertext ‖ 16-byte tag>
//
// The key id is the first 12 hex digits of SHA-256 over the key, so a value names the key it
// needs without revealing it. Each value is sealed for a purpose (the GCM additional data), so a
// sealed value copied into another kind of column does not open there. Which keys there are is
// the process's keyring (keys.ts loads it at start-up): sealing uses its current key, opening
// any key it holds. A value without the prefix was written before sealing existed; it is read as
// it is, and start-up seals it (stored.ts).

const PREFIX = 'lgsec1:';
export const KEY_BYTES = 32;

export type Purpose =
  | 'partner-header'
  | 'status-pull-header'
  | 'webhook-secret'
  | 'provider-log-key'
  | 'autologin-link-key'
  | 'blocklist-match-key'
  | 'totp-seed';

export interface SecretKey {
  id: string;
  key: Buffer;
}

export const keyIdOf = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 12);
export const secretKey = (key: Buffer): SecretKey => ({ id: keyIdOf(key), key });

/** A stored value that cannot be opened: its key is not in the keyring, or it does not decrypt. */
export class SealError extends Error {}

// The process's keys by id, and the one new values are sealed with. Keys are only ever added
// (a server and the tests it runs in one process may load several data directories' keys).
const known = new Map<string, Buffer>();
let current: SecretKey | null = null;

/** Adds keys to the keyring; the first becomes the one new values are sealed with. */
export function useKeys(keys: SecretKey[]): void {
  if (!keys.length) throw new Error('useKeys: no key');
  for (const k of keys) {
    if (k.key.length !== KEY_BYTES) throw new Error(`a secret key must be ${KEY_BYTES} bytes`);
    known.set(k.id, k.key);
  }
  current = keys[0];
}

/** The id of the key new values are sealed with (null before start-up loaded one). */
export const currentKeyId = () => current?.id ?? null;

export const isSealed = (value: string) => value.startsWith(PREFIX);

/** The id of the key a sealed value needs (null: not sealed). */
export const sealedWith = (value: string): string | null =>
  isSealed(value) ? value.slice(PREFIX.length, value.indexOf(':', PREFIX.length)) : null;

export function seal(plain: string, purpose: Purpose, key: SecretKey | null = current): string {
  if (!key) throw new Error('no secret key is loaded (secrets/keys.ts loads it at start-up)');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${key.id}:${body.toString('base64url')}`;
}

// Values opened, by sealed text and purpose: a partner's header is opened for every lead it is
// sent (an AES-GCM decryption, about 20 µs). A sealed text is never reused for another value (each
// seal draws a fresh IV), so an entry cannot go stale; it is used only while the key that opened
// it is still the one loaded under its id. The process holds the key itself, so keeping what it
// opens adds nothing a reader of its memory would not have. At most MAX_OPENED.
const MAX_OPENED = 1_000;
const opened = new Map<string, { key: Buffer; plain: string }>();

/** The clear value; a value that was never sealed is returned as it is. */
export function unseal(value: string, purpose: Purpose): string {
  const id = sealedWith(value);
  if (id === null) return value;
  const key = known.get(id);
  if (!key) throw new SealError(`a stored secret needs the secret key ${id}, which is not loaded`);
  const memo = `${purpose}\u0000${value}`;
  const hit = opened.get(memo);
  if (hit && hit.key === key) return hit.plain;
  const plain = open(value, id, key, purpose);
  if (opened.size >= MAX_OPENED) opened.clear();
  opened.set(memo, { key, plain });
  return plain;
}

function open(value: string, id: string, key: Buffer, purpose: Purpose): string {
  const body = Buffer.from(value.slice(PREFIX.length + id.length + 1), 'base64url');
  if (body.length < 28) throw new SealError(`a stored secret sealed with key ${id} is cut short`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, body.subarray(0, 12));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(12, body.length - 16)), decipher.final()]).toString('utf8');
  } catch {
    throw new SealError(`a stored secret sealed with key ${id} does not decrypt (altered, or sealed for another use)`);
  }
}

/** Header values sealed (names stay readable: they are shown, the values never are). */
export const sealValues = (values: Record<string, string>, purpose: Purpose) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, seal(v, purpose)]));

export const unsealValues = (values: Record<string, string>, purpose: Purpose) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, unseal(v, purpose)]));

/** A fresh random key. */
export const newSecretKey = () => secretKey(randomBytes(KEY_BYTES));
