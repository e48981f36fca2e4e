import { randomUUID } from 'node:crypto';
import type { DB } from '../db/database.js';

// One process at a time on a shared database: a job that must not run on two instances at once
// (a purge, a check that raises events, an import later) takes its lease first. The lease is a
// row in job_leases claimed by a conditional UPDATE; it runs out by itself when its holder dies.

/** This process, as a lease holder (tests play other processes with opts.holder). */
const HOLDER = randomUUID();

/**
 * Runs `work` when this process holds (or takes) the lease named `name` for `ms`; answers false
 * without running it while another process holds it. `ms` must be longer than one run can take.
 * The lease is let go after the work, or with `keep` held until it runs out: then the work runs
 * once per `ms` across every process (a purge every hour, whichever instance gets there first).
 */
export async function withLease(
  db: DB,
  name: string,
  ms: number,
  work: () => Promise<unknown>,
  opts: { keep?: boolean; holder?: string } = {},
): Promise<boolean> {
  const holder = opts.holder ?? HOLDER;
  const now = new Date();
  await db
    .insertInto('job_leases')
    .values({ name, holder: null, lease_until: null })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const claim = await db
    .updateTable('job_leases')
    .set({ holder, lease_until: new Date(now.getTime() + ms).toISOString() })
    .where('name', '=', name)
    .where((eb) =>
      eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now.toISOString()), eb('holder', '=', holder)]),
    )
    .executeTakeFirst();
  if (Number(claim.numUpdatedRows) === 0) return false;
  let ok = false;
  try {
    await work();
    ok = true;
  } finally {
    if (!ok || !opts.keep)
      await db
        .updateTable('job_leases')
        .set({ holder: null, lease_until: null })
        .where('name', '=', name)
        .where('holder', '=', holder)
        .execute();
  }
  return true;
}
