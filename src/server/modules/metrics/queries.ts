import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { capSlots, readUsage, usedOf } from '../../distribution/caps.js';

export interface DatabaseGauges {
  pending: number;
  /** Partners with a daily cap (not deleted): today's slots taken, and the cap. */
  caps: { id: string; name: string; used: number; cap: number }[];
}

/**
 * What the metrics read from the database at scrape time, in three cheap queries: a count of
 * pending leads (through the leads_status_created index; few leads are pending at any time), the
 * capped partners (a small table), and their counters for today by primary key.
 */
export async function readDatabaseGauges(db: Kysely<Database>, now: number): Promise<DatabaseGauges> {
  const row = await db
    .selectFrom('leads')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  const partners = await db
    .selectFrom('partners')
    .select(['id', 'name', 'daily_cap', 'working_hours'])
    .where('daily_cap', 'is not', null)
    .where('archived_at', 'is', null)
    .execute();
  // The same slot (scope and local day) the engine reserves in, so the gauge is the engine's count.
  const capped = partners.map((p) => ({
    p,
    slot: capSlots(
      {
        partner: {
          id: p.id,
          daily_cap: p.daily_cap,
          hourly_cap: null,
          total_cap: null,
          working_hours: p.working_hours ? JSON.parse(p.working_hours) : null,
        },
        target: null,
      },
      now,
      '',
    )[0],
  }));
  const usage = await readUsage(
    db,
    capped.map((c) => c.slot),
  );
  return {
    pending: Number(row.n),
    caps: capped.map(({ p, slot }) => ({ id: p.id, name: p.name, used: usedOf(slot, usage), cap: slot.cap })),
  };
}
