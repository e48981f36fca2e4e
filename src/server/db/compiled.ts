import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
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
  /** The statement for these arguments, to run later or in a pipeline (db/pipelined.ts). */
  const compile = (db: DB, ...args: A): CompiledQuery<R> => {
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
    return { ...query, parameters: slots.map((s, i) => (s >= 0 ? args[s] : query.parameters[i])) } as CompiledQuery<R>;
  };
  const run = async (db: DB, ...args: A): Promise<R[]> => (await db.executeQuery(compile(db, ...args))).rows;
  return Object.assign(run, { compile });
}

/** A fixed statement with no arguments, compiled once (CompiledQuery.raw needs no builder). */
export const rawOnce = <R>(sql: string) => {
  const query = CompiledQuery.raw(sql);
  return async (db: DB): Promise<R[]> => (await db.executeQuery<R>(query)).rows;
};

type Leaf = string | number | boolean | bigint | null;
/** Plain data: values (bound parameters) in plain objects and arrays; undefined keys are left out. */
export type Data = Leaf | undefined | readonly Data[] | { readonly [key: string]: Data };

/**
 * `build(db, variant, data)` compiled once per database, `variant` and shape of `data` (its keys
 * and array lengths: the SQL of an insert or update follows its columns); returns its rows for
 * new data of the same shape. For the hot statements whose columns vary from call to call. Every
 * value in `data` must land whole in bound parameters; `build` may branch on `variant` (a string
 * the caller makes from what decides the SQL), never on a value. At most `maxShapes` shapes are
 * kept per database; past them a statement is compiled on every call, as Kysely does.
 */
export function compiledPerShape<D extends Data, R>(
  build: (db: DB, variant: string, data: D) => Compilable<R>,
  maxShapes = 64,
) {
  const caches = new WeakMap<object, Map<string, Built>>();
  /** The statement for this data, to run later or in a pipeline (db/pipelined.ts). */
  const compile = (db: DB, variant: string, data: D): CompiledQuery<R> => {
    const values: Leaf[] = [];
    const shape: string[] = [variant, '\u0000'];
    const marked = mark(data, values, shape) as D;
    const key = shape.join('');
    const dialect = db.getExecutor().adapter;
    let cache = caches.get(dialect);
    if (!cache) caches.set(dialect, (cache = new Map()));
    let built = cache.get(key);
    if (!built) {
      const query = build(db, variant, marked).compile();
      const slots = query.parameters.map((p) => markerIndex(p, values.length));
      const unbound = values.findIndex((_, i) => !slots.includes(i));
      if (unbound >= 0)
        throw new Error(`compiledPerShape: value ${unbound + 1} of ${values.length} is not bound in ${query.sql}`);
      built = { query, slots };
      if (cache.size < maxShapes) cache.set(key, built);
    }
    const { query, slots } = built;
    return {
      ...query,
      parameters: slots.map((s, i) => (s >= 0 ? values[s] : query.parameters[i])),
    } as CompiledQuery<R>;
  };
  const run = async (db: DB, variant: string, data: D): Promise<R[]> =>
    (await db.executeQuery(compile(db, variant, data))).rows;
  return Object.assign(run, { compile });
}

const MARKER = '\u0000compiled-value-';

function markerIndex(p: unknown, count: number): number {
  if (typeof p !== 'string' || !p.startsWith(MARKER)) return -1;
  const i = Number(p.slice(MARKER.length, -1));
  return Number.isInteger(i) && i < count ? i : -1;
}

/** `data` with each value replaced by its marker (its index in `values`), its shape written to `shape`. */
function mark(data: Data, values: Leaf[], shape: string[]): Data {
  if (Array.isArray(data)) {
    shape.push('[');
    const out = data.map((d) => mark(d, values, shape));
    shape.push(']');
    return out;
  }
  if (data !== null && typeof data === 'object') {
    if (Object.getPrototypeOf(data) !== Object.prototype) throw new Error('compiledPerShape: data must be plain');
    shape.push('{');
    const out: Record<string, Data> = {};
    for (const [k, v] of Object.entries(data)) {
      if (v === undefined) continue;
      shape.push(JSON.stringify(k), ':');
      out[k] = mark(v, values, shape);
    }
    shape.push('}');
    return out;
  }
  if (data === undefined || typeof data === 'function' || typeof data === 'symbol')
    throw new Error('compiledPerShape: data must be plain');
  shape.push('?');
  values.push(data);
  return `${MARKER}${values.length - 1}\u0000`;
}

/** One row into `table` (a table's name, never a value), built once per table and column list. */
export const insertRow = compiledPerShape((db: DB, table: string, row: { readonly [column: string]: Data }) =>
  (db as unknown as Kysely<any>).insertInto(table).values(row),
);
