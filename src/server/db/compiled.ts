import { CompiledQuery, type Compilable } from 'kysely';
import type { DB } from './database.js';

// Kysely builds and compiles a query anew on every call: for a point read that costs more than
// running it (operation-node visitors, reference parsing, freezing; bench/RESULTS.md, "Auth
// without a database read"). The hottest reads are built once per database instead, with a
// marker in place of each argument, and run with the arguments put where the markers were.
//
// Only for queries whose shape does not depend on the arguments: each argument must land in
// bound parameters (one or several), whole (no `in` lists, no branches on the values).

type Built = { query: CompiledQuery; slots: number[] };

/**
 * `build(db, ...args)`, compiled once per database; returns its rows for new arguments. A
 * database's transactions and pinned connections share its compiled statement: the cache is
 * keyed by the adapter they share (the SQL depends on the dialect alone).
 */
export function compiledOnce<A extends (string | number | null)[], R>(build: (db: DB, ...args: A) => Compilable<R>) {
  const cache = new WeakMap<object, Built>();
  return async (db: DB, ...args: A): Promise<R[]> => {
    const dialect = db.getExecutor().adapter;
    let built = cache.get(dialect);
    if (!built) {
      const markers = args.map((_, i) => `\u0000compiled-argument-${i}\u0000`);
      const query = build(db, ...(markers as A)).compile();
      const slots = query.parameters.map((p) => markers.indexOf(p as string));
      const unbound = markers.findIndex((_, i) => !slots.includes(i));
      if (unbound >= 0)
        throw new Error(`compiledOnce: argument ${unbound + 1} of ${args.length} is not bound in ${query.sql}`);
      cache.set(dialect, (built = { query, slots }));
    }
    const { query, slots } = built;
    const parameters = slots.map((s, i) => (s >= 0 ? args[s] : query.parameters[i]));
    return (await db.executeQuery<R>({ ...query, parameters })).rows;
  };
}

/** A fixed statement with no arguments, compiled once (CompiledQuery.raw needs no builder). */
export const rawOnce = <R>(sql: string) => {
  const query = CompiledQuery.raw(sql);
  return async (db: DB): Promise<R[]> => (await db.executeQuery<R>(query)).rows;
};
