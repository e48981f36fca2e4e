import { closeSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { KEY_BYTES, newSecretKey, seal, sealedWith, secretKey, unseal, useKeys, type SecretKey } from './box.js';
import { rewriteSecrets } from './stored.js';

// The keyring at start-up: the keys from LEADGATE_SECRET_KEY, or else from the key file beside
// the data (made on first start, mode 0600, so the quick start needs nothing). With secrets
// stored and the key missing or wrong, start-up refuses, naming which. Then every secret not
// sealed with the first key (stored before sealing existed, or with an older key) is sealed
// with it: listing a new key before the old one and restarting rotates the key.

export const KEY_FILE = 'secret.key';

/** Start-up refused: the message says what is missing or wrong and what to do. */
export class SecretKeyError extends Error {}

export interface SecretKeyConfig {
  /** LEADGATE_SECRET_KEY's keys (the first seals), or null: the key file. */
  secretKeys: Buffer[] | null;
  dataDir: string;
}

export const keyFileOf = (config: SecretKeyConfig) => path.join(config.dataDir, KEY_FILE);

/** Keys written one per line, base64, the first the one that seals; '#' lines are comments. */
export function parseKeys(text: string, where: string): Buffer[] {
  const lines = text
    .split('\n')
    .filter((l) => !l.trim().startsWith('#'))
    .flatMap((l) => l.split(','))
    .map((l) => l.trim())
    .filter(Boolean);
  if (!lines.length) throw new SecretKeyError(`${where} holds no key`);
  return lines.map((l, i) => {
    const key = Buffer.from(l, l.includes('-') || l.includes('_') ? 'base64url' : 'base64');
    if (key.length !== KEY_BYTES)
      throw new SecretKeyError(
        `${where}: key ${i + 1} is not ${KEY_BYTES} bytes of base64 (it decodes to ${key.length})`,
      );
    return key;
  });
}

const FILE_HEADER =
  '# Leadgate secret key (AES-256-GCM; the first key seals, the others only open).\n' +
  '# Keep it with your backups: without it the stored partner secrets cannot be read.\n';

/** Writes the key file whole (a temporary file renamed over it), mode 0600. */
export function writeKeyFile(file: string, keys: SecretKey[]): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, FILE_HEADER + keys.map((k) => k.key.toString('base64')).join('\n') + '\n');
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

function readKeyFile(file: string): SecretKey[] | null {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SecretKeyError(`Could not read the secret key file ${file}: ${(err as Error).message}`);
  }
  return parseKeys(text, `The secret key file ${file}`).map(secretKey);
}

/** A new key file, unless another process made one first (then that one is used). */
function createKeyFile(file: string): SecretKey[] {
  mkdirSync(path.dirname(file), { recursive: true });
  const key = newSecretKey();
  let fd: number;
  try {
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(file)!;
    throw new SecretKeyError(`Could not create the secret key file ${file}: ${(err as Error).message}`);
  }
  try {
    writeSync(fd, FILE_HEADER + key.key.toString('base64') + '\n');
  } finally {
    closeSync(fd);
  }
  return [key];
}

/** The ids of the keys the stored secrets are sealed with. */
export async function sealedKeyIds(db: Kysely<Database>): Promise<Set<string>> {
  const ids = new Set<string>();
  await rewriteSecrets(db, (v) => {
    const id = sealedWith(v);
    if (id) ids.add(id);
    return v;
  });
  return ids;
}

/**
 * Loads the keyring for this database (refusing with SecretKeyError when stored secrets need a
 * key it lacks) and seals any secret still stored in clear. Returns where the keys came from and
 * the id of the sealing key.
 */
export async function openSecrets(config: SecretKeyConfig, db: Kysely<Database>) {
  const file = keyFileOf(config);
  const source = config.secretKeys ? 'LEADGATE_SECRET_KEY' : file;
  let keys: SecretKey[];
  const needed = await sealedKeyIds(db);
  if (config.secretKeys) keys = config.secretKeys.map(secretKey);
  else {
    const stored = readKeyFile(file);
    if (!stored && needed.size)
      throw new SecretKeyError(
        `The secret key is missing: the database holds secrets sealed with key ${[...needed].join(', ')}, ` +
          `but LEADGATE_SECRET_KEY is not set and ${file} does not exist. Restore the key file kept ` +
          `with this database's backup (or set LEADGATE_SECRET_KEY to that key).`,
      );
    keys = stored ?? createKeyFile(file);
  }
  const missing = [...needed].filter((id) => !keys.some((k) => k.id === id));
  if (missing.length)
    throw new SecretKeyError(
      `The secret key is wrong: the database holds secrets sealed with key ${missing.join(', ')}, ` +
        `but ${source} gives key ${keys.map((k) => k.id).join(', ')}. Use the key kept with this ` +
        `database (a rotated-away key can be listed after the current one until \`npm run secret-key:rotate\` has run).`,
    );
  useKeys(keys);
  const resealed = await resealAll(db, keys[0]);
  return {
    source: config.secretKeys ? ('environment' as const) : ('file' as const),
    file,
    keyId: keys[0].id,
    resealed,
  };
}

/** Seals with `key` every stored secret not sealed with it (in clear, or with an older key); returns how many. */
export async function resealAll(db: Kysely<Database>, key: SecretKey): Promise<number> {
  let changed = 0;
  await db.transaction().execute((tx) =>
    rewriteSecrets(tx, (v, p) => {
      if (sealedWith(v) === key.id) return v;
      changed++;
      return seal(unseal(v, p), p, key);
    }),
  );
  return changed;
}

/**
 * Key rotation (`npm run secret-key:rotate`, the server stopped). With the key file: a new key
 * is written first beside the old one (so a crash leaves every value openable), every secret is
 * re-sealed with it, then the file keeps the new key only. With LEADGATE_SECRET_KEY: its first
 * key is the new one (the old ones listed after it); every secret is re-sealed with it.
 */
export async function rotateSecretKey(config: SecretKeyConfig, db: Kysely<Database>) {
  const opened = await openSecrets(config, db);
  if (config.secretKeys) {
    return { source: opened.source, keyId: opened.keyId, resealed: opened.resealed, file: null };
  }
  const old = readKeyFile(opened.file)!;
  const fresh = newSecretKey();
  writeKeyFile(opened.file, [fresh, ...old]);
  useKeys([fresh, ...old]);
  const resealed = await resealAll(db, fresh);
  writeKeyFile(opened.file, [fresh]);
  return { source: opened.source, keyId: fresh.id, resealed, file: opened.file };
}
