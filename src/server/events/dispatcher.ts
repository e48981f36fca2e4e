import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { isPostgres, type DB } from '../db/database.js';
import { nowIso } from '../db/ids.js';
import type { DestinationKind } from '../db/tables.js';
import { writeTransaction } from '../db/write-batch.js';
import type { EventType } from './types.js';

// Sends the outbox's deliveries (event_deliveries, written by triggers with their events) to
// their destinations: at least once, in order per lead and destination, retried with
// exponential backoff until the delivery expires (24 h after it was made, or after a manual retry).
//
// A delivery is claimed with a lease (lease_until, lease_token) by one conditional UPDATE, so two
// processes never send the same delivery at once; PostgreSQL also skips rows another claim has
// locked. A process killed while sending leaves its lease to run out: another claim then sends
// the delivery again (at least once; receivers dedupe on the event id). Its answer is recorded
// only while the lease is still the one taken, so a late process cannot overwrite a newer try.
// A delivery waits while an earlier one for the same lead and destination is pending.

/** Deliveries claimed per round. */
const BATCH = 100;
/** Rounds per drain, so one drain ends (the next tick goes on). */
const MAX_ROUNDS = 50;
/** Sends at once per process. */
const CONCURRENCY = 16;
/** Every destination's call ends within this (its own timeout is shorter). */
export const SEND_TIMEOUT_MS = 10_000;
const LEASE_MS = SEND_TIMEOUT_MS + 5_000;
/** The first retry, then ×3 each time, up to MAX_DELAY_MS. */
const FIRST_DELAY_MS = 5_000;
const MAX_DELAY_MS = 6 * 3600_000;
/** Events fanned out per transaction. */
const FAN_OUT_BATCH = 500;
/** The advisory lock (PostgreSQL) one process holds while fanning out. */
const FAN_OUT_LOCK = 0x4c47_4f42; // "LGOB"
/** A delivery is given up (failed) this long after it was made or retried by hand. */
const EXPIRES_MS = 24 * 3600_000;
/** Events (and their deliveries) are kept this long. */
export const RETENTION_DAYS = 30;
const PURGE_EVERY_MS = 3600_000;
const PURGE_BATCH = 1000;

export interface StoredEvent {
  id: string;
  type: EventType;
  occurred_at: string;
  lead_id: string | null;
  partner_id: string | null;
  traffic_provider_id: string | null;
  campaign_id: string | null;
  data: Record<string, unknown>;
}

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

/** A kind of destination (webhooks, postbacks): reads a round's destinations once, then sends. */
export interface Destination {
  /** `events`: those of the round's deliveries to this kind. */
  prepare(ids: string[], events: StoredEvent[]): Promise<Prepared>;
}
export interface Prepared {
  send(event: StoredEvent, delivery: ClaimedDelivery): Promise<SendResult>;
  /** After the round's tries are recorded (health tracking), one entry per try. */
  afterTries?(tries: { id: string; ok: boolean }[]): Promise<void>;
}

/** The delay before try n+1 after n failed tries: 5 s, 15 s, 45 s … up to 6 h, ±10 %. */
export function retryDelayMs(failedTries: number, random = Math.random): number {
  const base = Math.min(FIRST_DELAY_MS * 3 ** Math.max(0, failedTries - 1), MAX_DELAY_MS);
  return Math.round(base * (0.9 + 0.2 * random()));
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An events row as the code uses it (ids as strings; pg answers bigint as text). */
export function toStoredEvent(r: { id: number | string; type: string; occurred_at: string; lead_id: string | null; partner_id: string | null; traffic_provider_id: string | null; campaign_id: string | null; data: string }): StoredEvent {
  return {
    id: String(r.id),
    type: r.type as EventType,
    occurred_at: r.occurred_at,
    lead_id: r.lead_id,
    partner_id: r.partner_id,
    traffic_provider_id: r.traffic_provider_id,
    campaign_id: r.campaign_id,
    data: JSON.parse(r.data) as Record<string, unknown>,
  };
}

export class EventDispatcher {
  private readonly destinations = new Map<DestinationKind, Destination>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private closed = false;
  private lastPurge = 0;

  constructor(private readonly db: DB, private readonly log: FastifyBaseLogger) {}

  register(kind: DestinationKind, destination: Destination) {
    this.destinations.set(kind, destination);
  }

  /**
   * Sends every delivery due now, round after round until one claims nothing (a lead's next
   * event becomes claimable once the one before it is sent); how many were tried.
   */
  drain(): Promise<number> {
    if (!this.running) {
      this.running = (async () => {
        let total = 0;
        for (let round = 0; round < MAX_ROUNDS && !this.closed; round++) {
          const n = await this.round();
          total += n;
          if (n === 0) break;
        }
        return total;
      })().finally(() => {
        this.running = null;
      });
    }
    return this.running;
  }

  /**
   * Makes the deliveries of events not yet fanned out, up to FAN_OUT_BATCH, oldest first, in one
   * transaction; one process at a time (on PostgreSQL an advisory lock, which another process
   * finding it taken skips), so a lead's deliveries are always made in the order of its events.
   */
  async fanOut(): Promise<number> {
    // Most rounds find nothing to fan out: a read, not a write transaction, tells.
    if (!(await this.db.selectFrom('events').select('id').where('fanned', '=', 0).limit(1).executeTakeFirst())) return 0;
    return writeTransaction(this.db, async (tx) => {
      if (isPostgres(tx)) {
        const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${FAN_OUT_LOCK}) as got`.execute(tx);
        if (!rows[0].got) return 0;
      }
      const ids = (await tx.selectFrom('events').select('id').where('fanned', '=', 0).orderBy('id').limit(FAN_OUT_BATCH).execute()).map((r) => Number(r.id));
      if (!ids.length) return 0;
      const now = Date.now();
      await sql`
        insert into event_deliveries (event_id, destination_kind, destination_id, lead_id, state, attempts, created_at, next_attempt_at, expires_at)
        select e.id, s.destination_kind, s.destination_id, e.lead_id, 'pending', 0, ${iso(now)}, ${iso(now)}, ${iso(now + EXPIRES_MS)}
        from events e join event_subscriptions s on s.event_type = e.type
          and (s.traffic_provider_id is null or s.traffic_provider_id = e.traffic_provider_id)
          and (s.campaign_id is null or s.campaign_id = e.campaign_id)
        where e.id in (${sql.join(ids)})
        order by e.id`.execute(tx);
      await tx.updateTable('events').set({ fanned: 1 }).where('id', 'in', ids).execute();
      return ids.length;
    });
  }

  private async round(): Promise<number> {
    const fanned = await this.fanOut();
    const token = randomUUID();
    const claimed = await this.claim(token);
    if (!claimed.length) return fanned;
    const events = await this.loadEvents(claimed.map((d) => d.event_id));
    // Each kind's destinations of this round, read once (a webhook's row, a provider's postbacks).
    const prepared = new Map<DestinationKind, Prepared | null>();
    for (const kind of new Set(claimed.map((d) => d.destination_kind))) {
      const destination = this.destinations.get(kind);
      const mine = claimed.filter((d) => d.destination_kind === kind);
      const ids = [...new Set(mine.map((d) => d.destination_id))];
      const theirEvents = [...new Set(mine.map((d) => d.event_id))].flatMap((id) => events.get(id) ?? []);
      prepared.set(kind, destination ? await destination.prepare(ids, theirEvents) : null);
    }
    const results: [ClaimedDelivery, SendResult][] = [];
    const queue = [...claimed];
    const worker = async () => {
      for (let d = queue.shift(); d; d = queue.shift()) {
        const p = prepared.get(d.destination_kind);
        const event = events.get(d.event_id);
        try {
          if (!event) results.push([d, { cancel: `the event is older than ${RETENTION_DAYS} days and was removed` }]);
          else results.push([d, p ? await p.send(event, d) : { cancel: `no sender for ${d.destination_kind} destinations` }]);
        } catch (err) {
          // Its lease runs out and a later round tries again.
          this.log.error({ err, deliveryId: d.id }, 'event delivery failed with an internal error');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    const recorded = await this.record(results, token);
    for (const [kind, p] of prepared) {
      const tried = recorded.filter(([d, r]) => d.destination_kind === kind && !('cancel' in r)).map(([d, r]) => ({ id: d.destination_id, ok: (r as { ok: boolean }).ok }));
      if (p?.afterTries && tried.length) await p.afterTries(tried).catch((err) => this.log.error({ err }, 'recording destination health failed'));
    }
    return claimed.length;
  }

  /**
   * A round's answers in two statements (one update, one insert of the tries), in one
   * transaction; the ones whose lease was lost (another process took them) are left out.
   */
  private async record(results: [ClaimedDelivery, SendResult][], token: string): Promise<[ClaimedDelivery, SendResult][]> {
    if (!results.length) return [];
    const now = Date.now();
    const rows = results.map(([d, result]) => {
      if ('cancel' in result) return sql`(${Number(d.id)}, ${'cancelled'}, ${d.attempts}, ${iso(now)}, ${null}, ${null}, ${result.cancel})`;
      const tries = d.attempts + 1;
      const next = now + retryDelayMs(tries);
      const state = result.ok ? 'delivered' : next > Date.parse(d.expires_at) ? 'failed' : 'pending';
      return sql`(${Number(d.id)}, ${state}, ${tries}, ${iso(result.ok ? now : next)}, ${iso(now)}, ${result.status}, ${result.error})`;
    });
    const pg = isPostgres(this.db);
    // PostgreSQL types a VALUES list from its first row: a null there needs its type.
    const typed = (c: string, type: string) => sql.raw(pg ? `cast(v.${c} as ${type})` : `v.${c}`);
    return writeTransaction(this.db, async (tx) => {
      const { rows: updated } = await sql<{ id: number | string }>`
        with v (id, state, attempts, next_at, last_at, status, error) as (values ${sql.join(rows)})
        update event_deliveries set state = v.state, attempts = ${typed('attempts', 'integer')}, next_attempt_at = v.next_at,
          last_attempt_at = coalesce(${typed('last_at', 'text')}, event_deliveries.last_attempt_at), last_status = ${typed('status', 'integer')},
          last_error = ${typed('error', 'text')}, lease_until = null, lease_token = null
        from v where event_deliveries.id = ${typed('id', 'bigint')} and event_deliveries.lease_token = ${token}
        returning event_deliveries.id`.execute(tx);
      const mine = new Set(updated.map((r) => String(r.id)));
      const kept = results.filter(([d]) => mine.has(d.id));
      const tries = kept.flatMap(([d, r]) =>
        'cancel' in r
          ? []
          : [{ delivery_id: d.id, attempted_at: iso(now - r.duration_ms), duration_ms: r.duration_ms, http_status: r.status, ok: r.ok ? 1 : 0, error: r.error, response_excerpt: r.excerpt }],
      );
      if (tries.length) await tx.insertInto('event_delivery_tries').values(tries).execute();
      return kept;
    });
  }

  private async claim(token: string): Promise<ClaimedDelivery[]> {
    const now = nowIso();
    const lease = iso(Date.now() + LEASE_MS);
    const skipLocked = isPostgres(this.db) ? sql`for update skip locked` : sql``;
    const { rows } = await sql<ClaimedDelivery>`
      update event_deliveries set lease_until = ${lease}, lease_token = ${token}
      where id in (
        select d.id from event_deliveries d
        where d.state = 'pending' and (d.lease_until is null or d.lease_until < ${now}) and d.next_attempt_at <= ${now}
          and (d.lead_id is null or not exists (
            select 1 from event_deliveries e where e.state = 'pending' and e.destination_kind = d.destination_kind
              and e.destination_id = d.destination_id and e.lead_id = d.lead_id and e.event_id < d.event_id))
        order by d.next_attempt_at, d.id limit ${BATCH} ${skipLocked})
      and state = 'pending' and (lease_until is null or lease_until < ${now})
      returning id, event_id, destination_kind, destination_id, attempts, expires_at`.execute(this.db);
    return rows.map((r) => ({ ...r, id: String(r.id), event_id: String(r.event_id) }));
  }

  private async loadEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    const rows = await this.db.selectFrom('events').selectAll().where('id', 'in', [...new Set(ids)]).execute();
    return new Map(rows.map((r) => [String(r.id), toStoredEvent(r)]));
  }

  /**
   * Drops events and deliveries older than RETENTION_DAYS (tries go with their delivery), oldest
   * first by id in batches (ids follow time, so no index on time is kept for this), leaving
   * deliveries still pending. How many events went.
   */
  async purge(): Promise<number> {
    const cutoff = iso(Date.now() - RETENTION_DAYS * 86400_000);
    let removed = 0;
    for (;;) {
      const batch = await this.db.selectFrom('event_deliveries').select(['id', 'created_at', 'state']).orderBy('id').limit(PURGE_BATCH).execute();
      const old = batch.filter((d) => d.created_at < cutoff && d.state !== 'pending').map((d) => Number(d.id));
      if (old.length) await this.db.deleteFrom('event_deliveries').where('id', 'in', old).execute();
      if (old.length < PURGE_BATCH) break;
    }
    for (;;) {
      const batch = await this.db.selectFrom('events').select(['id', 'occurred_at', 'fanned']).orderBy('id').limit(PURGE_BATCH).execute();
      const old = batch.filter((e) => e.occurred_at < cutoff && Number(e.fanned) === 1).map((e) => Number(e.id));
      if (old.length) await this.db.deleteFrom('events').where('id', 'in', old).execute();
      removed += old.length;
      if (old.length < PURGE_BATCH) break;
    }
    return removed;
  }

  private tick() {
    if (this.closed) return;
    void this.drain().catch((err) => this.log.error({ err }, 'event dispatch failed'));
    if (Date.now() - this.lastPurge > PURGE_EVERY_MS) {
      this.lastPurge = Date.now();
      void this.purge().catch((err) => this.log.error({ err }, 'purging old events failed'));
    }
  }

  start(intervalMs: number) {
    if (intervalMs <= 0 || this.timer) return;
    this.tick();
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  /** Stops and waits for the round in progress (its sends end within SEND_TIMEOUT_MS). */
  async close() {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    while (this.running) await this.running.catch(() => {});
  }
}
