import type { DB } from '../../db/database.js';

// Whether any partner tracks its autologin links, known without a query per lead: intake answers
// every delivered lead, and a lookup each time was one more round trip on its hot path
// (test/intake-round-trips.test.ts) for a setting that is off by default. Asked again after
// TRACKING_TTL_MS, and at once in this process when a partner is saved (forgetTracking): another
// server process sees a partner switched on within TRACKING_TTL_MS.

export const TRACKING_TTL_MS = 5_000;

const known = new WeakMap<DB, { at: number; any: Promise<boolean> }>();

export function anyPartnerTracks(db: DB): Promise<boolean> {
  const k = known.get(db);
  if (k && Date.now() - k.at < TRACKING_TTL_MS) return k.any;
  const any = db
    .selectFrom('partners')
    .select('id')
    .where('track_autologin', '=', 1)
    .limit(1)
    .executeTakeFirst()
    .then((r) => r !== undefined);
  any.catch(() => known.delete(db));
  known.set(db, { at: Date.now(), any });
  return any;
}

/** A partner was saved here: ask again on the next answer. */
export const forgetTracking = (db: DB) => void known.delete(db);
