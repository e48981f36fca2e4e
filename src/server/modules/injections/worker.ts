import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { DB } from '../../db/database.js';
import type { DeliveryOutcome } from '../../distribution/delivery.js';
import { isOpen } from '../../distribution/eligibility.js';
import type { RouteOverride } from '../../distribution/route.js';
import { claimForRedelivery } from '../leads/queries.js';
import {
  claimItem,
  dueJobs,
  hasItemsIn,
  jobSendingLead,
  leadOutcome,
  pendingLeads,
  saveBucket,
  setState,
  settleItem,
  strandedItems,
  takeLease,
  type JobRow,
} from './queries.js';

// The re-injection worker: one tick (the injections job, every INJECTION_INTERVAL_MS) works every
// due job this process holds the lease of. Pace: a token bucket per job (per_minute, at most five
// seconds' worth saved up), kept on the job row so another process carries it on. Each lead is
// claimed twice in one transaction before the engine is called (its item pending → sent while
// the job runs, the lead rejected/failed → pending), so neither a second process nor a crash
// sends it twice; an item a crash left `sent` is settled from its lead once the lead has an
// outcome (the recovery sweep finishes the lead's delivery).

/** How long the claim holds the lead before the engine's own lease takes over (as redeliver). */
const CLAIM_MS = 30_000;
/** A job's lease: renewed every tick and batch, taken over by another process when its holder stops. */
const LEASE_MS = 10_000;
/** Leads sent at once within a tick. */
const PARALLEL = 8;

export interface InjectionWorkerDeps {
  db: DB;
  delivery: { run(leadId: string, override: RouteOverride): Promise<DeliveryOutcome> };
  log: FastifyBaseLogger;
  /** Who holds the jobs' leases (tests play a second process with another). */
  holder?: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Why a lead is not sent: it is no longer rejected or failed. */
const skipReason = (status: string | undefined) =>
  status === undefined
    ? 'the lead no longer exists'
    : status === 'duplicate'
      ? "the lead is a duplicate by its traffic provider's policy"
      : `the lead is ${status}; only rejected or failed leads are re-injected`;

export class InjectionWorker {
  readonly holder: string;

  constructor(private readonly deps: InjectionWorkerDeps) {
    this.holder = deps.holder ?? randomUUID();
  }

  /** One tick at `now` (tests pass a clock of their own). */
  async tick(now = Date.now(), signal?: AbortSignal): Promise<void> {
    await this.settleStranded(now);
    for (const job of await dueJobs(this.deps.db, iso(now))) {
      if (signal?.aborted) return;
      await this.work(job, now, signal);
    }
  }

  private async work(job: JobRow, now: number, signal?: AbortSignal) {
    const { db } = this.deps;
    // The tick's clock plus the real time this tick has taken so far (a long tick keeps its lease).
    const started = Date.now();
    const lease = () => {
      const at = now + (Date.now() - started);
      return takeLease(db, job.id, this.holder, iso(at), iso(at + LEASE_MS));
    };
    if (!(await lease())) return;
    if (job.state === 'scheduled' && !(await setState(db, job.id, ['scheduled'], 'running', iso(now)))) return;
    const window =
      job.window === null ? null : (JSON.parse(job.window) as { time_zone: string; from: string; to: string });
    const open = isOpen(window && { timezone: window.time_zone, days: [1, 2, 3, 4, 5, 6, 7], ...window }, now);
    // Closed: nothing saved up meanwhile.
    if (!open) return saveBucket(db, job.id, this.holder, 0, iso(now));
    const perMs = job.per_minute / 60_000;
    const burst = Math.max(1, job.per_minute / 12);
    let tokens =
      job.tokens_at === null ? 1 : Math.min(burst, job.tokens + Math.max(0, now - Date.parse(job.tokens_at)) * perMs);
    const override = routeOf(job);
    while (tokens >= 1 && !signal?.aborted && (await lease())) {
      const leads = await pendingLeads(db, job.id, Math.min(Math.floor(tokens), 500));
      if (!leads.length) break;
      // A skipped lead (no longer rejected or failed) costs no token; a stop (paused, cancelled) ends the tick.
      let stopped = false;
      for (let i = 0; i < leads.length && !stopped; i += PARALLEL) {
        const outcomes = await Promise.all(
          leads.slice(i, i + PARALLEL).map((id) => this.send(job.id, id, override, now)),
        );
        tokens -= outcomes.filter((o) => o === 'sent').length;
        stopped = outcomes.includes('stopped');
      }
      if (stopped) break;
    }
    await saveBucket(db, job.id, this.holder, tokens, iso(now));
    if (!(await hasItemsIn(db, job.id, ['pending', 'sent']))) await setState(db, job.id, ['running'], 'done', iso(now));
  }

  /** One lead: claimed (item and lead), delivered, settled. 'stopped' when the job no longer runs. */
  private async send(jobId: string, leadId: string, override: RouteOverride, now: number) {
    const { db, delivery, log } = this.deps;
    const claimed = await db.transaction().execute(async (tx) => {
      if (!(await claimItem(tx, jobId, leadId, iso(now)))) return 'stopped' as const;
      if (await claimForRedelivery(tx, leadId, Date.now(), CLAIM_MS)) return 'sent' as const;
      const lead = await leadOutcome(tx, leadId);
      const reason = skipReason(lead?.status);
      await settleItem(tx, jobId, leadId, 'sent', { state: 'skipped', reason, partner_id: null, at: iso(now) });
      return 'skipped' as const;
    });
    if (claimed !== 'sent') return claimed;
    try {
      await delivery.run(leadId, override);
    } catch (err) {
      // A database error: the lead's lease runs out and the recovery sweep finishes it; settled then.
      log.error({ err, leadId, injection: jobId }, 're-injection: delivery failed with an internal error');
      return 'sent';
    }
    await this.settle(jobId, leadId, now);
    return 'sent';
  }

  /** A sent item's outcome from its lead; left as it is while the lead is still pending. */
  private async settle(jobId: string, leadId: string, now: number) {
    const lead = await leadOutcome(this.deps.db, leadId);
    if (!lead || lead.status === 'pending') return;
    await settleItem(this.deps.db, jobId, leadId, 'sent', outcomeOf(lead, now));
  }

  /** Items a crash (or a lost lease) left `sent` whose leads have an outcome by now. */
  private async settleStranded(now: number) {
    for (const r of await strandedItems(this.deps.db, 500))
      await settleItem(this.deps.db, r.job_id, r.lead_id, 'sent', outcomeOf(r, now));
  }
}

/** Where a job sends its leads, as the engine takes it. */
const routeOf = (job: Pick<JobRow, 'id' | 'flow_id' | 'partner_ids' | 'reoffer'>): RouteOverride => ({
  ...(job.flow_id ? { flowId: job.flow_id } : { partnerIds: JSON.parse(job.partner_ids!) as string[] }),
  skipOffered: !job.reoffer,
  injectionId: job.id,
});

/**
 * Where the recovery sweep resumes a lead a job was sending when its process died (DeliveryDeps
 * resumeRoute, wired in app.ts): the job's flow or partners, its attempts marked; {} for any other lead.
 */
export async function injectionRoute(db: DB, leadId: string): Promise<RouteOverride> {
  const job = await jobSendingLead(db, leadId);
  return job ? routeOf(job) : {};
}

function outcomeOf(lead: { status: string; reason: string | null; partner_id: string | null }, now: number) {
  const delivered = lead.status === 'delivered';
  return {
    state: delivered ? ('delivered' as const) : ('refused' as const),
    reason: delivered ? null : lead.reason,
    partner_id: delivered ? lead.partner_id : null,
    at: iso(now),
  };
}
