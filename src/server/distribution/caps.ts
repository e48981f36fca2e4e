import { sql, type Kysely, type RawBuilder } from 'kysely';
import { isPostgres } from '../db/database.js';
import type { CapCounts, Database } from '../db/tables.js';
import { dayKey, localDay, localHourKey } from '../time.js';
import type { Schedule } from './eligibility.js';

// Caps, counted in cap_counters (see the distribution and routing_rules migrations). A slot is
// reserved before the partner is called and given back when the partner does not take the lead,
// so the counters count leads delivered plus deliveries in progress, and concurrent leads — in
// one process or in several sharing one PostgreSQL — never overshoot: the reservation is one
// conditional UPDATE (`used < cap`), which PostgreSQL re-checks on the newest row version after
// waiting for a row lock (READ COMMITTED), and SQLite runs with the database write-locked.
//
// A flow target's caps may count FTDs instead (cap_counts = 'ftds'): those counters go up when
// an FTD is recorded (countFtd, from conversions/apply.ts), and a delivery only checks them. An
// FTD comes after its delivery, so such a cap stops new deliveries once it is reached; leads
// delivered before may still convert past it.
//
// Days and hours are the partner's local ones (UTC without working hours), its targets' too, so
// all of a partner's daily caps roll over at its own midnight.
//
// Counters start at 0 when the engine first sees a period: leads delivered before these
// counters existed are not counted (no seeding from old leads), nor are leads delivered while a
// cap was not set: only set caps take slots (no counter row is written per lead otherwise).
// A lead whose delivery was interrupted keeps its slot: never overshoot, even if that sometimes
// undershoots.

export type CapWindow = 'day' | 'hour' | 'total';
type CapColumn = 'daily_cap' | 'hourly_cap' | 'total_cap';

export interface CapSlot {
  scope: string; // 'partner:<id>' | 'target:<id>', then ':ftds' when counting FTDs, then ':<country>' for a country's cap
  period: string; // 'total' | local day 'YYYY-MM-DD' | local hour 'YYYY-MM-DDTHH'
  /** The cap when the delivery started (the eligibility check). */
  cap: number;
  /** Where the current cap lives: a reservation compares with it, so an edit applies at once. */
  source:
    | { table: 'partners' | 'flow_targets'; column: CapColumn; id: string }
    | { table: 'flow_targets'; column: 'country_caps'; id: string; country: string };
  window: CapWindow;
  counts: CapCounts;
  partnerId: string;
  flowId: string | null;
  /** For alerts: daily | hourly | total | flow_daily | flow_hourly | flow_total | flow_country_daily. */
  kind: string;
  country: string | null;
  /** Why a candidate is skipped when this slot is full. */
  full: string;
}

export interface CapOwner {
  partner: {
    id: string;
    daily_cap: number | null;
    hourly_cap: number | null;
    total_cap: number | null;
    working_hours: Schedule | null;
  };
  target: {
    id: string;
    flow_id: string;
    daily_cap: number | null;
    hourly_cap: number | null;
    total_cap: number | null;
    country_caps: Record<string, number>;
    cap_counts: CapCounts;
  } | null;
}

const WINDOWS: [CapWindow, CapColumn, string][] = [
  ['day', 'daily_cap', 'daily'],
  ['hour', 'hourly_cap', 'hourly'],
  ['total', 'total_cap', 'total'],
];

/**
 * The slots a lead from `country` takes at this candidate at instant `ms`, in the fixed order
 * every reservation locks them in (no deadlock between two leads).
 */
export function capSlots(c: CapOwner, ms: number, country: string): CapSlot[] {
  const slots: CapSlot[] = [];
  const p = c.partner;
  const tz = p.working_hours?.timezone ?? 'UTC';
  const periods: Record<CapWindow, string> = {
    day: dayKey(localDay(tz, ms)),
    hour: localHourKey(tz, ms),
    total: 'total',
  };
  for (const [window, column, word] of WINDOWS) {
    const cap = p[column];
    if (cap === null) continue;
    slots.push({
      scope: `partner:${p.id}`,
      period: periods[window],
      cap,
      source: { table: 'partners', column, id: p.id },
      window,
      counts: 'deliveries',
      partnerId: p.id,
      flowId: null,
      kind: word,
      country: null,
      full: `${word} cap full`,
    });
  }
  const t = c.target;
  if (!t) return slots;
  const ftds = t.cap_counts === 'ftds';
  const scope = `target:${t.id}${ftds ? ':ftds' : ''}`;
  const what = ftds ? ' FTD' : '';
  const common = { counts: t.cap_counts, partnerId: p.id, flowId: t.flow_id };
  for (const [window, column, word] of WINDOWS) {
    const cap = t[column];
    if (cap === null) continue;
    slots.push({
      ...common,
      scope,
      period: periods[window],
      cap,
      source: { table: 'flow_targets', column, id: t.id },
      window,
      kind: `flow_${word}`,
      country: null,
      full: `${word}${what} cap in this flow full`,
    });
  }
  const countryCap = t.country_caps[country];
  if (countryCap !== undefined) {
    slots.push({
      ...common,
      scope: `${scope}:${country}`,
      period: periods.day,
      cap: countryCap,
      source: { table: 'flow_targets', column: 'country_caps', id: t.id, country },
      window: 'day',
      kind: 'flow_country_daily',
      country,
      full: `daily${what} cap for ${country} in this flow full`,
    });
  }
  return slots;
}

const key = (s: { scope: string; period: string }) => `${s.scope}\n${s.period}`;

/** Current counts of these slots (one query for all candidates); a slot never used counts 0. */
export async function readUsage(db: Kysely<Database>, slots: CapSlot[]): Promise<Map<string, number>> {
  const used = new Map<string, number>();
  if (!slots.length) return used;
  const rows = await db
    .selectFrom('cap_counters')
    .select(['scope', 'period', 'used'])
    .where((eb) => eb.or(slots.map((s) => eb.and([eb('scope', '=', s.scope), eb('period', '=', s.period)]))))
    .execute();
  for (const r of rows) used.set(key(r), Number(r.used));
  return used;
}

export const usedOf = (s: CapSlot, usage: Map<string, number>) => usage.get(key(s)) ?? 0;

/** The first slot with no room left by a read (no reservation), or null. */
export const firstFull = (slots: CapSlot[], usage: Map<string, number>): CapSlot | null =>
  slots.find((s) => usedOf(s, usage) >= s.cap) ?? null;

/** The cap in force now, in SQL: null when it was removed (or its target is gone): no limit. */
function currentCap(db: Kysely<Database>, s: CapSlot): RawBuilder<number | null> {
  const src = s.source;
  if (src.column !== 'country_caps')
    return sql`(select ${sql.ref(src.column)} from ${sql.table(src.table)} where id = ${src.id})`;
  return isPostgres(db)
    ? sql`(select (country_caps::jsonb ->> ${src.country}::text)::integer from flow_targets where id = ${src.id})`
    : sql`(select country_caps ->> ${src.country} from flow_targets where id = ${src.id})`;
}

/** The counter's row, with what it counts, if it is not there yet. */
async function ensureCounter(trx: Kysely<Database>, s: CapSlot) {
  await trx
    .insertInto('cap_counters')
    .values({
      scope: s.scope,
      period: s.period,
      used: 0,
      partner_id: s.partnerId,
      flow_id: s.flowId,
      cap_kind: s.kind,
      country: s.country,
      counts: s.counts,
      cap: s.cap,
    })
    .onConflict((oc) => oc.columns(['scope', 'period']).doNothing())
    .execute();
}

/**
 * Takes one unit of every slot that counts deliveries, all or nothing, inside the caller's
 * transaction; a slot that counts FTDs is only checked. Returns the slot that is full (after
 * undoing the units already taken here), or null when the lead may go.
 */
export async function reserve(trx: Kysely<Database>, slots: CapSlot[]): Promise<CapSlot | null> {
  const taken: CapSlot[] = [];
  for (const s of slots) {
    const cap = currentCap(trx, s);
    if (s.counts === 'ftds') {
      const full = await trx
        .selectFrom('cap_counters')
        .select('used')
        .where('scope', '=', s.scope)
        .where('period', '=', s.period)
        .where(sql<boolean>`used >= coalesce(${cap}, used + 1)`)
        .executeTakeFirst();
      if (!full) continue;
      await release(trx, taken);
      return s;
    }
    await ensureCounter(trx, s);
    const res = await trx
      .updateTable('cap_counters')
      .set({ used: sql`used + 1`, cap })
      .where('scope', '=', s.scope)
      .where('period', '=', s.period)
      .where(sql<boolean>`used < coalesce(${cap}, used + 1)`)
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) === 0) {
      await release(trx, taken);
      return s;
    }
    taken.push(s);
  }
  return null;
}

/** The slots a reservation took (what a declined delivery gives back). */
export const reserved = (slots: CapSlot[]) => slots.filter((s) => s.counts === 'deliveries');

/** Gives back one unit of every slot reserve took (the partner did not take the lead). */
export async function release(trx: Kysely<Database>, slots: CapSlot[]): Promise<void> {
  for (const s of reserved(slots)) {
    await trx
      .updateTable('cap_counters')
      .set({ used: sql`used - 1` })
      .where('scope', '=', s.scope)
      .where('period', '=', s.period)
      .where('used', '>', 0)
      .execute();
  }
}

/**
 * An FTD recorded for a lead: one more on each FTD-counted cap of the flow target that delivered
 * it, in the windows of the FTD's instant. Inside the transaction that records the FTD.
 */
export async function countFtd(
  trx: Kysely<Database>,
  lead: { partner_id: string | null; flow_id: string | null; country: string },
  ms: number,
): Promise<void> {
  if (!lead.partner_id || !lead.flow_id) return;
  const t = await trx
    .selectFrom('flow_targets as t')
    .innerJoin('partners as p', 'p.id', 't.partner_id')
    .select(['t.id', 't.flow_id', 't.daily_cap', 't.hourly_cap', 't.total_cap', 't.country_caps', 'p.working_hours'])
    .where('t.flow_id', '=', lead.flow_id)
    .where('t.partner_id', '=', lead.partner_id)
    .where('t.cap_counts', '=', 'ftds')
    .executeTakeFirst();
  if (!t) return;
  const owner: CapOwner = {
    partner: {
      id: lead.partner_id,
      daily_cap: null,
      hourly_cap: null,
      total_cap: null,
      working_hours: t.working_hours ? JSON.parse(t.working_hours) : null,
    },
    target: {
      id: t.id,
      flow_id: t.flow_id,
      daily_cap: t.daily_cap,
      hourly_cap: t.hourly_cap,
      total_cap: t.total_cap,
      country_caps: JSON.parse(t.country_caps),
      cap_counts: 'ftds',
    },
  };
  for (const s of capSlots(owner, ms, lead.country)) {
    await ensureCounter(trx, s);
    await trx
      .updateTable('cap_counters')
      .set({ used: sql`used + 1`, cap: currentCap(trx, s) })
      .where('scope', '=', s.scope)
      .where('period', '=', s.period)
      .execute();
  }
}
