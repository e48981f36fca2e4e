import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql } from 'kysely';
import { isPostgres, type DB } from '../db/database.js';
import type { DestinationKind } from '../db/tables.js';
import { writeTransaction } from '../db/write-batch.js';
import { holdProviderFtds } from './hold.js';
import { claimDue, recordAnswers, type Answer, type Busy, type ClaimedDelivery, type SendResult } from './claims.js';
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
//
// One pool of CONCURRENCY sends per process claims as its slots free up, never in rounds that
// wait for their slowest send, and holds at most PER_DESTINATION sends to one destination: a
// slow receiver occupies a few slots, its backlog stays in the database unclaimed (so unleased,
// free for another process), and other destinations' deliveries are claimed past it. The limit
// is per process, like the request rate limits: N processes may each have PER_DESTINATION sends
// in flight to one receiver.

/** Sends at once per process: most of a send is waiting on the network, so slots are cheap. */
const CONCURRENCY = 128;
/**
 * Sends at once per destination and process (the outbound agent's connections per origin): a
 * slow destination holds at most these slots (it takes 8 slow ones to fill the pool), its
 * backlog waiting in the database.
 */
export const PER_DESTINATION = 16;
/** A destination that ended this many sends since the last claim has room for a batch: claim. */
const BATCH_AT = PER_DESTINATION;
/**
 * Answers are recorded (one transaction a batch) before each claim, or once this many wait, or
 * when the oldest has waited RECORD_WITHIN_MS (its lease runs meanwhile).
 */
const RECORD_AT = 64;
const RECORD_WITHIN_MS = 1_000;
/**
 * Due deliveries a claim looks at, at least (else one per free slot; destinations at their limit
 * are skipped without counting). A wider scan costs every claim more than it finds: a backlog
 * filling it is that of one destination, which is at its limit by the next claim.
 */
const MIN_SCAN = 64;
/** Every destination's call ends within this (its own timeout is shorter). */
export const SEND_TIMEOUT_MS = 10_000;
const LEASE_MS = SEND_TIMEOUT_MS + 5_000;
/** Events fanned out per transaction. */
const FAN_OUT_BATCH = 500;
/** The advisory lock (PostgreSQL) one process holds while fanning out. */
const FAN_OUT_LOCK = 0x4c47_4f42; // "LGOB"
/** A delivery is given up (failed) this long after it was made or retried by hand. */
const EXPIRES_MS = 24 * 3600_000;
/** Events (and their deliveries) are kept this long. */
export const RETENTION_DAYS = 30;
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

export type { ClaimedDelivery, SendResult };

/** A kind of destination (webhooks, postbacks): reads a claim's destinations once, then sends. */
export interface Destination {
  /** `events`: those of the claim's deliveries to this kind. */
  prepare(ids: string[], events: StoredEvent[]): Promise<Prepared>;
}
export interface Prepared {
  send(event: StoredEvent, delivery: ClaimedDelivery): Promise<SendResult>;
  /** After tries are recorded (health tracking), one entry per try; may be called several times. */
  afterTries?(tries: { id: string; ok: boolean }[]): Promise<void>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An events row as the code uses it (ids as strings; pg answers bigint as text). */
export function toStoredEvent(r: {
  id: number | string;
  type: string;
  occurred_at: string;
  lead_id: string | null;
  partner_id: string | null;
  traffic_provider_id: string | null;
  campaign_id: string | null;
  data: string;
}): StoredEvent {
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

/** A send in flight or answered: the delivery, its claim's lease token and what its destination read for the claim. */
interface Try {
  delivery: ClaimedDelivery;
  token: string;
  prepared: Prepared | null;
}

const keyOf = (d: { destination_kind: DestinationKind; destination_id: string }) =>
  `${d.destination_kind}\u0000${d.destination_id}`;

export class EventDispatcher {
  private readonly destinations = new Map<DestinationKind, Destination>();
  private running: Promise<number> | null = null;
  private closed = false;
  /** Sends in flight, per destination (a destination absent has none). */
  private readonly busy = new Map<string, Busy>();
  private sending = 0;
  /** Answers not recorded yet. */
  private answered: (Try & { result: SendResult; at: number })[] = [];
  /** Set by a tick: claim for any free slot, however few. */
  private poked = false;
  /** Sends ended since the last claim, and how many were in flight after it. */
  private ended = 0;
  private sentAfterClaim = 0;
  /** Sends ended since the last claim per destination; set once one has room for a batch again. */
  private endedAt = new Map<string, number>();
  private roomAgain = false;
  /** Something happened (a send ended, a tick, close) since the pool last looked. */
  private signalled = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly db: DB,
    private readonly log: FastifyBaseLogger,
  ) {}

  register(kind: DestinationKind, destination: Destination) {
    this.destinations.set(kind, destination);
  }

  /**
   * Sends every delivery due now and waits until none is left in flight and a claim finds
   * nothing more (a lead's next event becomes claimable once the one before it is recorded);
   * how many were tried. One pool per process: a drain already running is joined.
   *
   * The pool claims as slots free up instead of in rounds that wait for their slowest send:
   * each claim takes at most PER_DESTINATION in flight per destination, so a slow destination
   * holds a few slots and the others' deliveries go on past it. Answers are recorded in batches,
   * always before a claim.
   */
  drain(): Promise<number> {
    this.running ??= this.pool().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async pool(): Promise<number> {
    let tried = 0;
    let failure: unknown = null;
    for (;;) {
      let free = 0;
      let claimed = 0;
      try {
        // Claims come in batches, not a row per ended send (each claim and recording is a few
        // statements): once three quarters of what was in flight has ended, or one destination
        // has ended BATCH_AT sends (so slow receivers holding their slots never make a fast one
        // wait for a tick), when nothing is in flight, or at a tick (new work waits one at most).
        const due = this.poked || this.sending === 0 || this.roomAgain || this.ended * 4 >= this.sentAfterClaim * 3;
        // Before each claim: a lead's next event is claimable once the one before it is recorded.
        if (
          this.answered.length &&
          (due || this.answered.length >= RECORD_AT || Date.now() - this.answered[0].at >= RECORD_WITHIN_MS)
        )
          await this.record();
        free = CONCURRENCY - this.sending;
        if (!this.closed && failure === null && free > 0 && due) {
          this.poked = false;
          this.ended = 0;
          this.endedAt.clear();
          this.roomAgain = false;
          await this.fanOut();
          claimed = await this.claimAndSend(free);
          this.sentAfterClaim = this.sending;
          tried += claimed;
        }
      } catch (err) {
        // The database failed: claim nothing more, let what is in flight end, and say so.
        failure ??= err;
      }
      // A claim that filled every slot asked for may have left more behind: claim again at once.
      if (claimed && claimed === free) continue;
      if (this.sending === 0 && (failure !== null || !this.answered.length)) break;
      await this.nextSignal();
    }
    if (failure !== null) throw failure;
    return tried;
  }

  private signal() {
    this.signalled = true;
    this.wake?.();
  }

  private async nextSignal() {
    if (!this.signalled) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = null;
    this.signalled = false;
  }

  /**
   * Makes the deliveries of events not yet fanned out, up to FAN_OUT_BATCH, oldest first, in one
   * transaction; one process at a time (on PostgreSQL an advisory lock, which another process
   * finding it taken skips), so a lead's deliveries are always made in the order of its events.
   */
  async fanOut(): Promise<number> {
    // Most rounds find nothing to fan out: a read, not a write transaction, tells.
    if (!(await this.db.selectFrom('events').select('id').where('fanned', '=', 0).limit(1).executeTakeFirst()))
      return 0;
    return writeTransaction(this.db, async (tx) => {
      if (isPostgres(tx)) {
        const { rows } = await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(${FAN_OUT_LOCK}) as got`.execute(
          tx,
        );
        if (!rows[0].got) return 0;
      }
      const ids = (
        await tx.selectFrom('events').select('id').where('fanned', '=', 0).orderBy('id').limit(FAN_OUT_BATCH).execute()
      ).map((r) => Number(r.id));
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
      await holdProviderFtds(tx, ids);
      await tx.updateTable('events').set({ fanned: 1 }).where('id', 'in', ids).execute();
      return ids.length;
    });
  }

  /** Claims up to `free` deliveries and starts sending them; how many. */
  private async claimAndSend(free: number): Promise<number> {
    const token = randomUUID();
    const claimed = await claimDue(this.db, {
      token,
      leaseUntil: iso(Date.now() + LEASE_MS),
      limit: free,
      perDestination: PER_DESTINATION,
      scan: Math.max(MIN_SCAN, free),
      busy: [...this.busy.values()],
    });
    if (!claimed.length) return 0;
    const events = await this.loadEvents(claimed.map((d) => d.event_id));
    // Each kind's destinations of this claim, read once (a webhook's row, a provider's postbacks).
    const prepared = new Map<DestinationKind, Prepared | null>();
    for (const kind of new Set(claimed.map((d) => d.destination_kind))) {
      const destination = this.destinations.get(kind);
      const mine = claimed.filter((d) => d.destination_kind === kind);
      const ids = [...new Set(mine.map((d) => d.destination_id))];
      const theirEvents = [...new Set(mine.map((d) => d.event_id))].flatMap((id) => events.get(id) ?? []);
      prepared.set(kind, destination ? await destination.prepare(ids, theirEvents) : null);
    }
    for (const d of claimed)
      void this.send(
        { delivery: d, token, prepared: prepared.get(d.destination_kind) ?? null },
        events.get(d.event_id),
      );
    return claimed.length;
  }

  private async send(t: Try, event: StoredEvent | undefined) {
    const d = t.delivery;
    const key = keyOf(d);
    const busy = this.busy.get(key) ?? { kind: d.destination_kind, id: d.destination_id, n: 0 };
    busy.n++;
    this.busy.set(key, busy);
    this.sending++;
    try {
      const result: SendResult = !event
        ? { cancel: `the event is older than ${RETENTION_DAYS} days and was removed` }
        : t.prepared
          ? await t.prepared.send(event, d)
          : { cancel: `no sender for ${d.destination_kind} destinations` };
      this.answered.push({ ...t, result, at: Date.now() });
    } catch (err) {
      // Its lease runs out and a later claim tries again.
      this.log.error({ err, deliveryId: d.id }, 'event delivery failed with an internal error');
    } finally {
      if (--busy.n === 0) this.busy.delete(key);
      this.sending--;
      this.ended++;
      const ended = (this.endedAt.get(key) ?? 0) + 1;
      this.endedAt.set(key, ended);
      if (ended >= BATCH_AT) this.roomAgain = true;
      this.signal();
    }
  }

  /** Records the answers in hand (one transaction), then tells each destination of its tries. */
  private async record() {
    const batch = this.answered;
    this.answered = [];
    let recorded: Answer[];
    try {
      recorded = await recordAnswers(
        this.db,
        batch.map((a) => ({ delivery: a.delivery, token: a.token, result: a.result })),
      );
    } catch (err) {
      // Kept for the next try: a lease still held is recorded then.
      this.answered.unshift(...batch);
      throw err;
    }
    const kept = new Set(recorded.map((a) => a.delivery.id));
    const tries = new Map<Prepared, { id: string; ok: boolean }[]>();
    for (const a of batch) {
      if (!kept.has(a.delivery.id) || 'cancel' in a.result || !a.prepared?.afterTries) continue;
      const list = tries.get(a.prepared) ?? [];
      list.push({ id: a.delivery.destination_id, ok: a.result.ok });
      tries.set(a.prepared, list);
    }
    for (const [p, list] of tries)
      await p.afterTries!(list).catch((err) => this.log.error({ err }, 'recording destination health failed'));
  }

  private async loadEvents(ids: string[]): Promise<Map<string, StoredEvent>> {
    const rows = await this.db
      .selectFrom('events')
      .selectAll()
      .where('id', 'in', [...new Set(ids)])
      .execute();
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
      const batch = await this.db
        .selectFrom('event_deliveries')
        .select(['id', 'created_at', 'state'])
        .orderBy('id')
        .limit(PURGE_BATCH)
        .execute();
      const old = batch.filter((d) => d.created_at < cutoff && d.state !== 'pending').map((d) => Number(d.id));
      if (old.length) await this.db.deleteFrom('event_deliveries').where('id', 'in', old).execute();
      if (old.length < PURGE_BATCH) break;
    }
    for (;;) {
      const batch = await this.db
        .selectFrom('events')
        .select(['id', 'occurred_at', 'fanned'])
        .orderBy('id')
        .limit(PURGE_BATCH)
        .execute();
      const old = batch.filter((e) => e.occurred_at < cutoff && Number(e.fanned) === 1).map((e) => Number(e.id));
      if (old.length) await this.db.deleteFrom('events').where('id', 'in', old).execute();
      removed += old.length;
      if (old.length < PURGE_BATCH) break;
    }
    return removed;
  }

  /**
   * Wakes the pool: claim for any free slot, however few (the event-dispatch job, every
   * EVENT_DISPATCH_INTERVAL_MS). Returns at once; the sends go on in the background.
   */
  poke() {
    if (this.closed) return;
    this.poked = true;
    this.signal();
    void this.drain().catch((err) => this.log.error({ err }, 'event dispatch failed'));
  }

  /** Stops claiming and waits for the sends in flight (each ends within SEND_TIMEOUT_MS) and their recording. */
  async close() {
    this.closed = true;
    this.signal();
    while (this.running) await this.running.catch(() => {});
  }
}
