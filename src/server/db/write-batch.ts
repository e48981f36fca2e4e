import type { Kysely, Transaction } from 'kysely';
import { isPostgres, type DB } from './database.js';
import type { Database } from './tables.js';

// Group commit for SQLite. Lead intake and delivery write in short transactions (store the
// lead; reserve caps and record the attempt; record the answer), three per lead. On SQLite each
// commit appends every page it changed to the WAL — a lead touches ~20 index and rollup pages —
// and the writes, not the queries, bound throughput. Transactions that arrive while one is being
// written run together in the next one: the pages they share (the right edge of every index, the
// current hour's rollup rows) are written once per group instead of once per lead.
//
// Semantics are those of separate transactions run one after another, which is what SQLite's
// single connection gives anyway: each function sees the writes of those before it (so duplicate
// checks and cap reservations stay exact), and its promise settles only after the group has
// committed (so an answer never reports an uncommitted write). If one function throws, the group
// is rolled back and each of its functions is run again in a transaction of its own, so only the
// one that failed fails; the functions must therefore only write to the database (no other side
// effects), which is what a transaction function should do anyway.
//
// PostgreSQL has real concurrency (and several processes): there each function is its own
// transaction.

type Work<T> = (tx: Transaction<Database>) => Promise<T>;

interface Item {
  work: Work<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/** The most functions in one group, to bound how long a group holds the connection. */
const MAX_GROUP = 64;

const queues = new WeakMap<Kysely<Database>, { items: Item[]; scheduled: boolean }>();

export function writeTransaction<T>(db: DB, work: Work<T>): Promise<T> {
  if (isPostgres(db)) return db.transaction().execute(work);
  let q = queues.get(db);
  if (!q) queues.set(db, (q = { items: [], scheduled: false }));
  const queue = q;
  return new Promise<T>((resolve, reject) => {
    queue.items.push({ work, resolve: resolve as (v: unknown) => void, reject });
    if (!queue.scheduled) {
      queue.scheduled = true;
      setImmediate(() => void flush(db, queue));
    }
  });
}

async function flush(db: DB, queue: { items: Item[]; scheduled: boolean }) {
  const group = queue.items.splice(0, MAX_GROUP);
  queue.scheduled = false;
  if (queue.items.length) {
    queue.scheduled = true;
    setImmediate(() => void flush(db, queue));
  }
  if (group.length === 1) return runAlone(db, group[0]);
  let results: unknown[];
  try {
    results = await db.transaction().execute(async (tx) => {
      const out: unknown[] = [];
      for (const item of group) out.push(await item.work(tx));
      return out;
    });
  } catch {
    // Rolled back: find the one that fails by giving each its own transaction.
    for (const item of group) await runAlone(db, item);
    return;
  }
  group.forEach((item, i) => item.resolve(results[i]));
}

async function runAlone(db: DB, item: Item) {
  try {
    item.resolve(await db.transaction().execute(item.work));
  } catch (err) {
    item.reject(err);
  }
}
