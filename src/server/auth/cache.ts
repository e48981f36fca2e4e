// What authentication reads on every request (the session or key row with its operator and
// role, the account IP allow-list), kept in memory per database, and exactly as strict as
// reading it each time: every change that can narrow access bumps auth_state.generation in its
// own transaction, by trigger, in whichever process or tool makes it (migration
// 20261125T020000Z_auth_generation). Each request first reads that one number (sync); a new one
// empties the cache, so a revoke, a disabled operator, a role change or a new allow-list holds
// from the next request on, on every process.
//
// Only rows that were found are kept (an unknown token is read again each time), at most
// MAX_ENTRIES of them, and a row read while the generation moved on is not kept.
import { rawOnce } from '../db/compiled.js';
import { PREPARED, type DB } from '../db/database.js';

const MAX_ENTRIES = 10_000;
const readGeneration = rawOnce<{ generation: string | number }>(
  `select generation from auth_state where id = 1 ${PREPARED}`,
);

export class AuthCache {
  private generation: string | null = null;
  private rows = new Map<string, unknown>();
  private allowList: unknown = null;

  /** Reads the generation; when it moved, forgets everything. Returns the generation now. */
  async sync(db: DB): Promise<string> {
    const [row] = await readGeneration(db);
    const g = String(row?.generation ?? 'none');
    if (g !== this.generation) {
      this.rows.clear();
      this.allowList = null;
      this.generation = g;
    }
    return g;
  }

  /** The row under `key`, else `load()`'s answer, kept when found and read under the generation `seen`. */
  async row<T>(key: string, seen: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    if (seen === this.generation && this.rows.has(key)) return this.rows.get(key) as T;
    const row = await load();
    this.keep(key, seen, row);
    return row;
  }

  /** Stores a row read under the generation `seen`, if that is still the current one. */
  private keep(key: string, seen: string, row: unknown) {
    if (row === undefined || seen !== this.generation) return;
    if (this.rows.size >= MAX_ENTRIES) this.rows.clear();
    this.rows.set(key, row);
  }

  /** The account allow-list as `load` builds it, kept like a row. */
  async allowed<T>(seen: string, load: () => Promise<T>): Promise<T> {
    if (seen === this.generation && this.allowList) return this.allowList as T;
    const list = await load();
    if (seen === this.generation) this.allowList = list;
    return list;
  }
}

const caches = new WeakMap<DB, AuthCache>();

/** The cache of one database handle (each app, and each test app, has its own). */
export function authCacheOf(db: DB): AuthCache {
  let c = caches.get(db);
  if (!c) caches.set(db, (c = new AuthCache()));
  return c;
}
