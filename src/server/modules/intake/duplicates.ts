import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { isPostgres } from '../../db/database.js';
import { pipelined } from '../../db/pipelined.js';
import { writeTransaction } from '../../db/write-batch.js';
import type { Database } from '../../db/tables.js';
import type { StoredDuplicatePolicy } from '../traffic-providers/schemas.js';
import type { NormalizedLead } from './validate.js';

type Field = StoredDuplicatePolicy['fields'][number];

/** The provider's policy, or null when it checks nothing (no fields, or a zero window). */
export function activePolicy(json: string): StoredDuplicatePolicy | null {
  const policy = JSON.parse(json) as StoredDuplicatePolicy;
  return policy.fields.length && policy.window_hours > 0 ? policy : null;
}

/**
 * The names an intake serializes on: the lead's duplicate-checked values (by value alone, so a
 * provider-scoped and a global check of the same email also wait for each other) and its
 * Idempotency-Key. Sorted, so two requests sharing several names take them in the same order
 * and cannot deadlock.
 */
export function lockNames(
  policy: StoredDuplicatePolicy | null,
  lead: NormalizedLead,
  providerId: string,
  key: string | null,
): string[] {
  const names = (policy?.fields ?? []).map((f) => `dup:${f}:${lead[f]}`);
  if (key !== null) names.push(`idem:${providerId}:${key}`);
  return names.sort();
}

/** What serialized's work sends its statements through. */
export interface Serial {
  /** The connection the work runs on (SQLite: its transaction). */
  db: Kysely<Database>;
  /**
   * The work's last write, if it makes one: on PostgreSQL sent together with the locks' release,
   * which runs once the write has committed (db/pipelined.ts: one round trip for both). Nothing
   * may run on `db` after it.
   */
  last(query: CompiledQuery): Promise<void>;
}

/**
 * Runs an intake's `first` statement and then its `work` holding the names, so two intakes
 * sharing a name run one after the other and the second sees what the first stored.
 *
 * SQLite: one transaction. Kysely runs one transaction at a time on SQLite's single connection,
 * so intake transactions never overlap and need no locks (and write-batch.ts groups their
 * commits).
 *
 * PostgreSQL: session advisory locks on one connection, taken in the order given, and released
 * once `work` is done; `work`'s statements each commit on their own, so every write it makes
 * must be one statement (storeLead's lead, key and first attempt are). The locks go out with
 * `first` and the release with the work's last write (`Serial.last`), each pair in one round
 * trip (db/pipelined.ts): `first` runs once the locks are held, with a snapshot of its own, so
 * it sees every lead committed before. No transaction spans a round trip to this process: a
 * lead's insert touches the analytics rollup rows every concurrent intake touches (the current
 * hour's), and a transaction would hold their row locks until its COMMIT came back, with every
 * other intake queued behind it (measured: bench/RESULTS.md). The lock keys are numbers
 * computed here (the first 8 bytes of the name's SHA-256), so the query text holds no value from
 * the request. (Until 2026-11-25 the locks were transaction-scoped and PostgreSQL hashed the
 * names: an old and a new process do not wait for each other during a rolling upgrade.)
 */
export async function serialized<R, T>(
  db: Kysely<Database>,
  names: string[],
  first: CompiledQuery<R>,
  work: (rows: R[], s: Serial) => Promise<T>,
): Promise<T> {
  const direct = async (conn: Kysely<Database>) => {
    const rows = (await conn.executeQuery(first)).rows;
    return work(rows, { db: conn, last: async (q) => void (await conn.executeQuery(q)) });
  };
  if (!isPostgres(db)) return writeTransaction(db, direct);
  if (!names.length) return direct(db);
  return db.connection().execute(async (conn) => {
    let held = true;
    const release = CompiledQuery.raw('select pg_advisory_unlock_all()');
    try {
      const lock = CompiledQuery.raw(names.map((n) => `select pg_advisory_lock(${lockKey(n)})`).join('; '));
      const [, read] = await pipelined(conn, [lock, first]);
      return await work(read.rows as R[], {
        db: conn,
        last: async (q) => {
          held = false; // the release goes out with the write, whatever the write's answer
          await pipelined(conn, [q, release]);
        },
      });
    } finally {
      // The connection goes back to the pool: it must hold nothing. (If it is broken instead,
      // PostgreSQL releases the locks with its session.)
      if (held) await conn.executeQuery(release);
    }
  });
}

/** A signed 64-bit advisory lock key for a name. */
export const lockKey = (name: string): bigint => createHash('sha256').update(name).digest().readBigInt64BE(0);

/**
 * The earliest lead within the window (not itself a duplicate; this provider's only, when the
 * scope is provider) with the same value in one of the policy's fields; the field named is
 * email when both match. One query: a range of leads_email_created and/or leads_phone_created
 * (SQLite and PostgreSQL both read an OR of two indexed equalities as two index ranges). The
 * provider is compared as an expression (`|| ''`) so no engine is tempted to walk the
 * provider's index (every lead of the provider in the window) instead. At most one row, the
 * earlier lead's id, email and email digest; duplicateOf reads them. `since`: the window's start (windowStart).
 */
export function duplicateQuery(
  db: Kysely<Database>,
  policy: StoredDuplicatePolicy,
  lead: Pick<NormalizedLead, 'email' | 'phone'>,
  digests: Record<'email' | 'phone', string>,
  providerId: string,
  since: string,
) {
  const fields = checkedFields(policy);
  // A lead whose contacts the retention purged is found by its digest (privacy/contact-digests.ts;
  // partial indexes of those leads only, leads_email_digest_created and leads_phone_digest_created).
  let q = db
    .selectFrom('leads')
    .select(['id', 'email', 'email_digest'])
    .where((eb) =>
      eb.or([...fields.map((f) => eb(f, '=', lead[f])), ...fields.map((f) => eb(`${f}_digest`, '=', digests[f]))]),
    )
    .where('status', '<>', 'duplicate')
    .where('created_at', '>=', since);
  if (policy.scope === 'provider') q = q.where(sql<string>`${sql.ref('traffic_provider_id')} || ''`, '=', providerId);
  // `limit 1` as a literal, not a bound `limit ?`: inside intake's one read SQLite ran the
  // bound form about 9 times slower (188 µs against 20 for the whole read on a bench database:
  // bench/RESULTS.md, issue 30, eighth step), and a constant is what the query means.
  return q.orderBy('created_at').orderBy('id').limit(sql.lit(1));
}

/** Where the policy's window starts, for a lead received at `now`. */
export const windowStart = (policy: StoredDuplicatePolicy, now: Date) =>
  new Date(now.getTime() - policy.window_hours * 3_600_000).toISOString();

export const checkedFields = (policy: StoredDuplicatePolicy) =>
  (['email', 'phone'] as const).filter((f) => policy.fields.includes(f));

/** duplicateQuery's row → the earlier lead and the field named (email when both match), or null. */
export function duplicateOf(
  row: { id: string; email: string; email_digest: string | null } | null | undefined,
  policy: StoredDuplicatePolicy,
  lead: NormalizedLead,
  emailDigest: string,
): { leadId: string; field: Field } | null {
  if (!row) return null;
  const sameEmail = row.email === lead.email || row.email_digest === emailDigest;
  return { leadId: row.id, field: checkedFields(policy).includes('email') && sameEmail ? 'email' : 'phone' };
}
