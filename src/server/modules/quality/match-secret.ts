import { randomBytes } from 'node:crypto';
import type { DB } from '../../db/database.js';
import { initSetting } from '../../db/settings.js';
import { seal, unseal } from '../../secrets/box.js';
import { clearContactKeys, setMatchKey } from './blocklist-queries.js';
import { protectKey } from './match-keys.js';

// The install's key for the blocklists' email and phone match keys (match-keys.ts protectKey):
// those keys are HMAC-SHA256 digests under it, so the lists hold no email or phone in their keys,
// and an erased subject's entry (modules/privacy) holds none at all. Made on first use, kept in the
// settings table sealed (secrets/box.ts; concurrent first uses keep one: initSetting), as the
// tracked links' key is (autologin/tokens.ts). Replacing it would orphan every email and phone
// entry's key; rotating the secret key only re-seals it (secrets/stored.ts).

const SETTING = 'blocklist_match_key';
const PURPOSE = 'blocklist-match-key';
const loaded = new WeakMap<DB, Promise<Buffer>>();

/** The key, read once per process (intake then pays no statement for it). */
export function blocklistSecret(db: DB): Promise<Buffer> {
  let k = loaded.get(db);
  if (!k) {
    const fresh = seal(randomBytes(32).toString('hex'), PURPOSE);
    k = initSetting(db, SETTING, fresh).then((stored) => Buffer.from(unseal(stored, PURPOSE), 'hex'));
    k.catch(() => loaded.delete(db));
    loaded.set(db, k);
  }
  return k;
}

/**
 * At start-up, once the keyring is open (a migration runs before it): email and phone entries
 * stored with their clear key (before keys were hashed) get their digest. Idempotent; nothing to
 * do after the first start. Also loads the key (made on the first start).
 */
export async function protectBlocklistKeys(db: DB): Promise<number> {
  // Read here, at start-up, so that intake never pays the statements of its first read.
  const secret = await blocklistSecret(db);
  const rows = await clearContactKeys(db);
  if (!rows.length) return 0;
  await db.transaction().execute(async (tx) => {
    for (const r of rows) await setMatchKey(tx, r.id, protectKey(r.match_key, secret));
  });
  return rows.length;
}
