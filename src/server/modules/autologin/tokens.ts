import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { DB } from '../../db/database.js';
import { initSetting } from '../../db/settings.js';
import { seal, unseal } from '../../secrets/box.js';

// A tracked link's token is HMAC-SHA256(install key, lead id + partner id), base64url: 256 bits
// that carry nothing a reader can recover (no lead id, partner or contact) and cannot be guessed
// without the key. Deriving it (rather than storing a random one) lets the same link be answered
// again (an Idempotency-Key replay) while the database holds only its SHA-256. The key is made on
// first use and kept in the settings table, sealed (secrets/box.ts; concurrent first uses keep
// one: initSetting), as provider-log/keys.ts keeps its signing key; replacing it would orphan
// every link issued (rotating the secret key only re-seals it).

const SETTING = 'autologin_link_key';
const loaded = new WeakMap<DB, Promise<Buffer>>();

function linkKey(db: DB): Promise<Buffer> {
  let k = loaded.get(db);
  if (!k) {
    const fresh = seal(randomBytes(32).toString('hex'), 'autologin-link-key');
    k = initSetting(db, SETTING, fresh).then((stored) => Buffer.from(unseal(stored, 'autologin-link-key'), 'hex'));
    k.catch(() => loaded.delete(db));
    loaded.set(db, k);
  }
  return k;
}

export async function linkToken(db: DB, leadId: string, partnerId: string): Promise<string> {
  return createHmac('sha256', await linkKey(db))
    .update(`${leadId}\n${partnerId}`)
    .digest('base64url');
}

/** What is stored and looked up: the SHA-256 of whatever was sent (any length, any form). */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
