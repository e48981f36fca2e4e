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
const BATCH = 32;
/** Rounds per drain, so one drain ends (the next tick goes on). */
const MAX_ROUNDS = 50;
/** Sends at once per process. */
const CONCURRENCY = 8;
/** Every destination's call ends within this (its own timeout is shorter). */
export const SEND_TIMEOUT_MS = 10_000;
const LEASE_MS = SEND_TIMEOUT_MS + 5_000;
/** The first retry, then ×3 each time, up to MAX_DELAY_MS. */
const FIRST_DELAY_MS = 5_000;
const MAX_DELAY_MS = 6 * 3600_000;
/** Events (and their deliveries) are kept this long, unless a delivery is still pending. */
export const RETENTION_DAYS = 30;
const PURGE_EVERY_MS = 3600_000;

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

export interface Destination {
  send(event: StoredEvent, delivery: ClaimedDelivery): Promise<SendResult>;
  /** After a try is recorded (failure tracking); must not throw. */
  afterTry?(destinationId: string, ok: boolean): Promise<void>;
}

/** The delay before try n+1 after n failed tries: 5 s, 15 s, 45 s … up to 6 h, ±10 %. */
export function retryDelayMs(failedTries: number, random = Math.random): number {
  const base = Math.min(FIRST_DELAY_MS * 3 ** Math.max(0, failedTries - 1), MAX_DELAY_MS);
  return Math.round(base * (0.9 + 0.2 * random()));
}

const iso = (ms: number) => new Date(ms).toISOString();
const parse = (data: string | object) => (typeof data === 'string' ? JSON.parse(data) : data) as Record<string, unknown>;

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

  private async round(): Promise<number> {
    const token = randomUUID();
    const claimed = await this.claim(token);
    if (!claimed.length) return 0;
    const events = await this.loadEvents(claimed.map((d) => d.event_id));
    const queue = [...claimed];
    const worker = async () => {
      for (let d = queue.shift(); d; d = queue.shift()) {
        try {
          await this.deliver(d, events.get(d.event_id)!, token);
        } catch (err) {
          // Its lease runs out and a later round tries again.
          this.log.error({ err, deliveryId: d.id }, 'event delivery failed with an internal error');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
    return claimed.length;
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
              and e.destination_id = d.destination_id and e.lead_id = d.lead_id and e.id < d.id))
        order by d.next_attempt_at, d.id limit ${BATCH} ${skipLocked})
      and state = 'pending' and (lease_until is null or lease_until < ${now})
      returning id, event_id, destination_kind, destination_id, attempts, expires_at`.execute(this.db);
    return rows.map((r) => ({ ...r, id: String(r.id), event_id: String(r.event_id) }));
  }

  private async loadEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    const rows = await this.db.selectFrom('events').selectAll().where('id', 'in', [...new Set(ids)]).execute();
    return new Map(
      rows.map((r) => [
        String(r.id),
        { id: String(r.id), type: r.type as EventType, occurred_at: r.occurred_at, lead_id: r.lead_id, partner_id: r.partner_id, traffic_provider_id: r.traffic_provider_id, campaign_id: r.campaign_id, data: parse(r.data) },
      ]),
    );
  }

  private async deliver(d: ClaimedDelivery, event: StoredEvent, token: string) {
    const destination = this.destinations.get(d.destination_kind);
    const result: SendResult = destination ? await destination.send(event, d) : { cancel: `no sender for ${d.destination_kind} destinations` };
    const now = Date.now();
    const mine = (q: any) => q.where('id', '=', d.id).where('lease_token', '=', token);
    if ('cancel' in result) {
      await mine(this.db.updateTable('event_deliveries').set({ state: 'cancelled', last_error: result.cancel, lease_until: null, lease_token: null })).execute();
      return;
    }
    const tries = d.attempts + 1;
    const next = now + retryDelayMs(tries);
    const state = result.ok ? 'delivered' : next > Date.parse(d.expires_at) ? 'failed' : 'pending';
    const recorded = await writeTransaction(this.db, async (tx) => {
      const res = await mine(
        tx.updateTable('event_deliveries').set({
          state,
          attempts: tries,
          next_attempt_at: iso(result.ok ? now : next),
          last_attempt_at: iso(now),
          last_status: result.status,
          last_error: result.error,
          lease_until: null,
          lease_token: null,
        }),
      ).executeTakeFirst();
      if (Number(res.numUpdatedRows) === 0) return false; // the lease ran out and another process took it
      await tx
        .insertInto('event_delivery_tries')
        .values({ delivery_id: d.id, attempted_at: iso(now - result.duration_ms), duration_ms: result.duration_ms, http_status: result.status, ok: result.ok ? 1 : 0, error: result.error, response_excerpt: result.excerpt })
        .execute();
      return true;
    });
    if (recorded) await destination?.afterTry?.(d.destination_id, result.ok);
  }

  /** Drops events older than RETENTION_DAYS with no delivery pending (their deliveries and tries go with them). */
  async purge(): Promise<number> {
    const cutoff = iso(Date.now() - RETENTION_DAYS * 86400_000);
    const res = await this.db
      .deleteFrom('events')
      .where('occurred_at', '<', cutoff)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('event_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'events.id').where('d.state', '=', 'pending'))),
      )
      .executeTakeFirst();
    return Number(res.numDeletedRows);
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
