import { sql } from 'kysely';
import { isPostgres, type DB } from '../db/database.js';
import { nowIso } from '../db/ids.js';
import type { DestinationKind } from '../db/tables.js';
import { writeTransaction } from '../db/write-batch.js';

// The dispatcher's two statements on event_deliveries: the claim (a lease taken by one
// conditional UPDATE) and the recording of answers. See dispatcher.ts for the rules they keep.

export interface ClaimedDelivery {
  id: string;
  event_id: string;
  destination_kind: DestinationKind;
  destination_id: string;
  /** Tries before this one. */
  attempts: number;
  expires_at: string;
}

export type SendResult =
  | { ok: boolean; status: number | null; error: string | null; excerpt: string | null; duration_ms: number }
  /** The destination is gone or disabled: the delivery ends without a try. */
  | { cancel: string };

/** The first retry, then ×3 each time, up to MAX_DELAY_MS. */
const FIRST_DELAY_MS = 5_000;
const MAX_DELAY_MS = 6 * 3600_000;

/** The delay before try n+1 after n failed tries: 5 s, 15 s, 45 s … up to 6 h, ±10 %. */
export function retryDelayMs(failedTries: number, random = Math.random): number {
  const base = Math.min(FIRST_DELAY_MS * 3 ** Math.max(0, failedTries - 1), MAX_DELAY_MS);
  return Math.round(base * (0.9 + 0.2 * random()));
}

/** A destination this process is sending to, and how many sends it has in flight there. */
export interface Busy {
  kind: DestinationKind;
  id: string;
  n: number;
}

/** A try's answer, with the lease it was sent under. */
export interface Answer {
  delivery: ClaimedDelivery;
  token: string;
  result: SendResult;
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Leases up to `limit` due deliveries (oldest due first) with `token` until `leaseUntil`,
 * taking no more of a destination than `perDestination` minus what `busy` says is in flight
 * there: a destination at its limit is skipped in the scan itself, so its backlog waits in the
 * database while others' deliveries behind it are claimed. `scan` bounds the due rows looked at.
 */
export async function claimDue(
  db: DB,
  o: { token: string; leaseUntil: string; limit: number; perDestination: number; scan: number; busy: Busy[] },
): Promise<ClaimedDelivery[]> {
  const now = nowIso();
  const same = (alias: string, b: Busy) =>
    sql`(${sql.ref(`${alias}.destination_kind`)} = ${b.kind} and ${sql.ref(`${alias}.destination_id`)} = ${b.id})`;
  const full = o.busy.filter((b) => b.n >= o.perDestination);
  const partly = o.busy.filter((b) => b.n > 0 && b.n < o.perDestination);
  const skipFull = full.length
    ? sql`and not (${sql.join(
        full.map((b) => same('d', b)),
        sql` or `,
      )})`
    : sql``;
  const inFlight = partly.length
    ? sql`case ${sql.join(
        partly.map((b) => sql`when ${same('c', b)} then ${sql.lit(b.n)}`),
        sql` `,
      )} else 0 end`
    : sql`0`;
  const skipLocked = isPostgres(db) ? sql`for update skip locked` : sql``;
  const { rows } = await sql<ClaimedDelivery>`
    update event_deliveries set lease_until = ${o.leaseUntil}, lease_token = ${o.token}
    where id in (
      select r.id from (
        select c.id, c.next_attempt_at,
          row_number() over (partition by c.destination_kind, c.destination_id order by c.next_attempt_at, c.id) + ${inFlight} as place
        from (
          select d.id, d.destination_kind, d.destination_id, d.next_attempt_at from event_deliveries d
          where d.state = 'pending' and (d.lease_until is null or d.lease_until < ${now}) and d.next_attempt_at <= ${now} ${skipFull}
            and (d.lead_id is null or not exists (
              select 1 from event_deliveries e where e.state = 'pending' and e.destination_kind = d.destination_kind
                and e.destination_id = d.destination_id and e.lead_id = d.lead_id and e.event_id < d.event_id))
          order by d.next_attempt_at, d.id limit ${o.scan} ${skipLocked}
        ) c
      ) r
      where r.place <= ${o.perDestination}
      order by r.next_attempt_at, r.id limit ${o.limit})
    and state = 'pending' and (lease_until is null or lease_until < ${now})
    returning id, event_id, destination_kind, destination_id, attempts, expires_at`.execute(db);
  return rows
    .map((r) => ({ ...r, id: String(r.id), event_id: String(r.event_id) }))
    .sort((a, b) => Number(a.id) - Number(b.id));
}

/**
 * Answers in two statements (one update, one insert of the tries), in one transaction; those
 * whose lease was lost (another process took the delivery, or it was cancelled) are left out.
 */
export async function recordAnswers(db: DB, answers: Answer[]): Promise<Answer[]> {
  if (!answers.length) return [];
  const now = Date.now();
  const rows = answers.map(({ delivery: d, token, result }) => {
    if ('cancel' in result)
      return sql`(${Number(d.id)}, ${token}, ${'cancelled'}, ${d.attempts}, ${iso(now)}, ${null}, ${null}, ${result.cancel})`;
    const tries = d.attempts + 1;
    const next = now + retryDelayMs(tries);
    const state = result.ok ? 'delivered' : next > Date.parse(d.expires_at) ? 'failed' : 'pending';
    return sql`(${Number(d.id)}, ${token}, ${state}, ${tries}, ${iso(result.ok ? now : next)}, ${iso(now)}, ${result.status}, ${result.error})`;
  });
  const pg = isPostgres(db);
  // PostgreSQL types a VALUES list from its first row: a null there needs its type.
  const typed = (c: string, type: string) => sql.raw(pg ? `cast(v.${c} as ${type})` : `v.${c}`);
  return writeTransaction(db, async (tx) => {
    const { rows: updated } = await sql<{ id: number | string }>`
      with v (id, token, state, attempts, next_at, last_at, status, error) as (values ${sql.join(rows)})
      update event_deliveries set state = v.state, attempts = ${typed('attempts', 'integer')}, next_attempt_at = v.next_at,
        last_attempt_at = coalesce(${typed('last_at', 'text')}, event_deliveries.last_attempt_at), last_status = ${typed('status', 'integer')},
        last_error = ${typed('error', 'text')}, lease_until = null, lease_token = null
      from v where event_deliveries.id = ${typed('id', 'bigint')} and event_deliveries.lease_token = v.token
      returning event_deliveries.id`.execute(tx);
    const mine = new Set(updated.map((r) => String(r.id)));
    const kept = answers.filter((a) => mine.has(a.delivery.id));
    const tries = kept.flatMap(({ delivery: d, result: r }) =>
      'cancel' in r
        ? []
        : [
            {
              delivery_id: d.id,
              attempted_at: iso(now - r.duration_ms),
              duration_ms: r.duration_ms,
              http_status: r.status,
              ok: r.ok ? 1 : 0,
              error: r.error,
              response_excerpt: r.excerpt,
            },
          ],
    );
    if (tries.length) await tx.insertInto('event_delivery_tries').values(tries).execute();
    return kept;
  });
}
