import { sql, type Kysely } from 'kysely';
import type { DB } from '../../db/database.js';
import type { Database } from '../../db/tables.js';

// What shapes of entry the blocklists hold (a kind; an IP family and prefix length), so intake
// builds and probes only keys that could match (match-keys.ts leadKeys): none while the lists are
// empty, one or two IP keys instead of 33 when blocks are /24s and single addresses. Counted in
// blocklist_shapes in the transaction that adds or removes entries. Known per process without a
// query per lead: asked again after SHAPES_TTL_MS, and at once in this process when entries
// change here (forgetShapes); another server process sees a new shape within SHAPES_TTL_MS (a new
// entry of a shape already in use blocks at once everywhere: only the key set is cached).

export const SHAPES_TTL_MS = 5_000;

const known = new WeakMap<DB, { at: number; shapes: Promise<ReadonlySet<string>> }>();

export function blocklistShapes(db: DB): Promise<ReadonlySet<string>> {
  const k = known.get(db);
  if (k && Date.now() - k.at < SHAPES_TTL_MS) return k.shapes;
  const shapes = db
    .selectFrom('blocklist_shapes')
    .select('shape')
    .where('entries', '>', 0)
    .execute()
    .then((rows) => new Set(rows.map((r) => r.shape)));
  shapes.catch(() => known.delete(db));
  known.set(db, { at: Date.now(), shapes });
  return shapes;
}

/** Entries changed here: ask again on the next lead. */
export const forgetShapes = (db: DB) => void known.delete(db);

/** Adds `n` (negative: removes) entries of each shape, in the caller's transaction. */
export async function countShapes(db: Kysely<Database>, counts: Map<string, number>) {
  for (const [shape, n] of counts) {
    if (!n) continue;
    await db
      .insertInto('blocklist_shapes')
      .values({ shape, entries: n })
      .onConflict((oc) => oc.column('shape').doUpdateSet({ entries: sql`blocklist_shapes.entries + ${n}` }))
      .execute();
  }
}
