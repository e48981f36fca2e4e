import { nowIso } from '../db/ids.js';
import { providerFact, recordProviderFacts } from '../db/provider-facts.js';
import type { Deliverer } from './delivery.js';

// The recovery sweep: `pending` leads whose lease ran out belong to nobody (their process died,
// or a delivery failed with an internal error). Each is claimed with a conditional UPDATE — the
// lease must still hold the value read — so two processes sweeping at once never both take one.
// A lead whose partner call was in flight is failed, not sent elsewhere: that partner may have
// registered it. The rest resume their delivery, skipping partners already offered.

/** Leads looked at per sweep; the next sweep takes the rest. */
const SWEEP_LIMIT = 300;
/** Deliveries resumed at once. */
const CONCURRENCY = 8;
/** A claimed lead's lease until its delivery pushes it further. */
const CLAIM_MS = 30_000;

class LostClaim extends Error {}

const INTERRUPTED_ATTEMPT = "the server stopped while waiting for the partner's answer";
/** What the provider is told (intake's providerReason for `failed`). */
const DELIVERY_FAILED = 'delivery failed; the lead is kept';

export async function recoverStale(runner: Deliverer): Promise<{ resumed: number; failed: number }> {
  const { db, log } = runner.deps;
  const stale = await db
    .selectFrom('leads')
    .select(['id', 'lease_until', 'traffic_provider_id'])
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', nowIso())]))
    .limit(SWEEP_LIMIT)
    .execute();

  let resumed = 0;
  let failed = 0;

  async function recover(lead: { id: string; lease_until: string | null; traffic_provider_id: string }) {
    const lease = new Date(Date.now() + CLAIM_MS).toISOString();
    const claim = await db
      .updateTable('leads')
      .set({ lease_until: lease })
      .where('id', '=', lead.id)
      .where('status', '=', 'pending')
      .where((eb) =>
        lead.lease_until === null ? eb('lease_until', 'is', null) : eb('lease_until', '=', lead.lease_until),
      )
      .executeTakeFirst();
    if (Number(claim.numUpdatedRows) === 0) return; // another sweep, or its owner, has it

    const inFlight = await db
      .selectFrom('lead_attempts')
      .innerJoin('partners', 'partners.id', 'lead_attempts.partner_id')
      .select(['partners.name'])
      .where('lead_attempts.lead_id', '=', lead.id)
      .where('lead_attempts.outcome', '=', 'in_flight')
      .executeTakeFirst();
    if (!inFlight) {
      resumed++;
      // The runner logs an internal error; the lease then runs out again and a later sweep retries.
      const route = (await runner.deps.resumeRoute?.(lead.id)) ?? {};
      await runner.run(lead.id, { ...route, resume: true }).catch(() => {});
      return;
    }
    const reason =
      `Delivery interrupted while ${inFlight.name} was being called; the partner may have registered it: ` +
      'check with them before redelivering.';
    // Attempt first, then lead: the order the engine's own last transaction writes them in.
    const done = await db
      .transaction()
      .execute(async (trx) => {
        await trx
          .updateTable('lead_attempts')
          .set({ outcome: 'error', reason: INTERRUPTED_ATTEMPT })
          .where('lead_id', '=', lead.id)
          .where('outcome', '=', 'in_flight')
          .execute();
        const now = nowIso();
        const res = await trx
          .updateTable('leads')
          .set({ status: 'failed', reason, status_updated_at: now, lease_until: null })
          .where('id', '=', lead.id)
          .where('status', '=', 'pending')
          .where('lease_until', '=', lease)
          .executeTakeFirst();
        if (Number(res.numUpdatedRows) === 0) throw new LostClaim(); // roll the attempt back too
        await recordProviderFacts(trx, [
          providerFact(lead.traffic_provider_id, lead.id, 'refused', { status: 'failed', reason: DELIVERY_FAILED }),
        ]);
        return true;
      })
      .catch((err) => {
        if (err instanceof LostClaim) return false;
        throw err;
      });
    if (done) failed++;
  }

  const queue = [...stale];
  const worker = async () => {
    for (let lead = queue.shift(); lead; lead = queue.shift()) {
      try {
        await recover(lead);
      } catch (err) {
        log.error({ err, leadId: lead.id }, 'recovery of a lead failed');
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, queue.length) }, worker));
  if (resumed || failed) log.info({ resumed, failed }, 'recovery sweep: stale pending leads resumed or failed');
  return { resumed, failed };
}
