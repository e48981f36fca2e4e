import type { CompiledQuery, QueryResult } from 'kysely';
import { isPostgres, type DB } from './database.js';

/**
 * Runs the statements on `conn`'s connection one after the other, each on its own (autocommit,
 * as if awaited in turn), and returns their results in order. On PostgreSQL they are sent
 * together, without waiting for each answer (pg's pipeline mode, which database.ts turns on):
 * one round trip for all of them. Each still gets its own snapshot, and a statement runs only
 * once the one before it has finished (a lock it waited for is held, a write it made is
 * committed). Every statement runs even when one before it fails; the first failure is thrown,
 * once all have answered. On SQLite they simply run in turn, and the first failure stops them.
 *
 * `conn` must be a single connection (db.connection()), never the pool: statements sent to
 * the pool would go to different connections.
 */
export async function pipelined(conn: DB, queries: CompiledQuery[]): Promise<QueryResult<unknown>[]> {
  if (!isPostgres(conn)) {
    const results: QueryResult<unknown>[] = [];
    for (const q of queries) results.push(await conn.executeQuery(q));
    return results;
  }
  // Kysely hands a pinned connection to one query at a time; its provider also hands it over
  // directly, and pg sends what is queued on a pipelined client at once.
  return conn.getExecutor().provideConnection(async (connection) => {
    const settled = await Promise.allSettled(queries.map((q) => connection.executeQuery(q)));
    const failed = settled.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    return settled.map((s) => (s as PromiseFulfilledResult<QueryResult<unknown>>).value);
  });
}
