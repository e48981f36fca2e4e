import type { Kysely, LogEvent } from 'kysely';

// Who wants to see each statement's outcome and duration (the metrics' query-time histogram).
// The database is opened before the app that watches it (and tests open several apps, each on
// its own database), so observers attach to a Kysely instance after the fact, here, rather than
// through openDatabase's options.

export type QueryObserver = (e: LogEvent) => void;

const observers = new WeakMap<Kysely<any>, Set<QueryObserver>>();

/** For openDatabase: the set its `log` function feeds; register it once the instance exists. */
export const observerSet = () => new Set<QueryObserver>();
export const registerObservers = (db: Kysely<any>, set: Set<QueryObserver>) => void observers.set(db, set);

/**
 * Calls `fn` after every statement `db` runs (an error too), with Kysely's own timing. Returns
 * the function that stops it. No-op for a Kysely instance not made by openDatabase.
 */
export function observeQueries(db: Kysely<any>, fn: QueryObserver): () => void {
  const set = observers.get(db);
  set?.add(fn);
  return () => void set?.delete(fn);
}
