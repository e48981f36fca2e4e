import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { dayKey, localDay } from '../time.js';
import type { Schedule } from './eligibility.js';

// Caps, counted in cap_counters (see the distribution migration). A slot is reserved before the
// partner is called and given back when the partner does not take the lead, so the counters
// count leads delivered plus deliveries in progress, and concurrent leads — in one process or
// in several sharing one PostgreSQL — never overshoot: the reservation is one conditional
// UPDATE (`used < cap`), which PostgreSQL re-checks on the newest row version after waiting
// for a row lock (READ COMMITTED), and SQLite runs with the database write-locked.
//
// Counters start at 0 when the engine first sees a period: leads delivered before these
// counters existed are not counted (no seeding from old leads), nor are leads delivered while a
// cap was not set: only set caps take slots (no counter row is written per lead otherwise).
// A lead whose delivery was interrupted keeps its slot: never overshoot, even if that sometimes
// undershoots.

export interface CapSlot {
  scope: string; // 'partner:<id>' | 'target:<flow_target id>'
  period: string; // 'total' | local day 'YYYY-MM-DD'
  /** The cap when the delivery started (the eligibility check). */
  cap: number;
  /** Where the current cap lives: a reservation compares with it, so an edit applies at once. */
  source: { table: 'partners' | 'flow_targets'; column: 'daily_cap' | 'total_cap'; id: string };
  /** Why a candidate is skipped when this slot is full. */
  full: string;
}

export interface CapOwner {
  partner: { id: string; daily_cap: number | null; total_cap: number | null; working_hours: Schedule | null };
  target: { id: string; daily_cap: number | null } | null;
}

/**
 * The slots a lead takes at this candidate, in the fixed order every reservation locks them in
 * (no deadlock between two leads). Days are the partner's local days (UTC without working hours),
 * its targets' too, so a partner's daily caps all roll over at its own midnight.
 */
export function capSlots(c: CapOwner, ms: number): CapSlot[] {
  const slots: CapSlot[] = [];
  const p = c.partner;
  const day = dayKey(localDay(p.working_hours?.timezone ?? 'UTC', ms));
  if (p.daily_cap !== null) {
    slots.push({ scope: `partner:${p.id}`, period: day, cap: p.daily_cap, source: { table: 'partners', column: 'daily_cap', id: p.id }, full: 'daily cap full' });
  }
  if (p.total_cap !== null) {
    slots.push({ scope: `partner:${p.id}`, period: 'total', cap: p.total_cap, source: { table: 'partners', column: 'total_cap', id: p.id }, full: 'total cap full' });
  }
  if (c.target && c.target.daily_cap !== null) {
    const t = c.target;
    slots.push({ scope: `target:${t.id}`, period: day, cap: t.daily_cap!, source: { table: 'flow_targets', column: 'daily_cap', id: t.id }, full: 'daily cap in this flow full' });
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

/** The first slot with no room left by a read (no reservation), or null. */
export const firstFull = (slots: CapSlot[], usage: Map<string, number>): CapSlot | null =>
  slots.find((s) => (usage.get(key(s)) ?? 0) >= s.cap) ?? null;

/**
 * Takes one unit of every slot, all or nothing, inside the caller's transaction. Returns the
 * slot that is full (after undoing the units already taken here), or null when all are taken.
 */
export async function reserve(trx: Kysely<Database>, slots: CapSlot[]): Promise<CapSlot | null> {
  const taken: CapSlot[] = [];
  for (const s of slots) {
    await trx.insertInto('cap_counters').values({ scope: s.scope, period: s.period, used: 0 }).onConflict((oc) => oc.columns(['scope', 'period']).doNothing()).execute();
    // The cap now, not as read earlier; removed since (null, or the target gone): no limit.
    const cap = sql<number>`(select ${sql.ref(s.source.column)} from ${sql.table(s.source.table)} where id = ${s.source.id})`;
    const res = await trx
      .updateTable('cap_counters')
      .set({ used: sql`used + 1` })
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

/** Gives back one unit of every slot (the partner did not take the lead). */
export async function release(trx: Kysely<Database>, slots: CapSlot[]): Promise<void> {
  for (const s of slots) {
    await trx.updateTable('cap_counters').set({ used: sql`used - 1` }).where('scope', '=', s.scope).where('period', '=', s.period).where('used', '>', 0).execute();
  }
}
