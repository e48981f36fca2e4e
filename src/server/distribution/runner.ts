import type { App } from '../types.js';
import { deliverLead, deliverStarted } from './engine.js';
import { createPartnerClient } from './partner-client.js';
import type { DeliveryDeps, DeliveryOutcome } from './delivery.js';
import { recoverStale } from './recovery.js';
import type { Plan, RouteOverride } from './route.js';

/**
 * Runs deliveries and keeps track of them, so a graceful shutdown lets every delivery in
 * progress finish (a lead is never left `pending` by a SIGTERM), and runs the recovery sweep
 * that picks up the leads of a process that died.
 */
export class DeliveryRunner {
  private readonly inFlight = new Set<Promise<unknown>>();
  private sweeping: Promise<unknown> | null = null;
  private again = false;
  private closed = false;

  constructor(readonly deps: DeliveryDeps) {}

  /** Delivers a `pending` lead the caller owns (see engine.ts). Never rejects for partner errors. */
  run(leadId: string, override: RouteOverride = {}): Promise<DeliveryOutcome> {
    return this.track(leadId, deliverLead(this.deps, leadId, override));
  }

  /** Delivers a lead intake stored with its first attempt started (engine.ts, firstAttempt). */
  runStarted(planned: Plan, attemptId: string, lease: string): Promise<DeliveryOutcome> {
    return this.track(planned.lead.id, deliverStarted(this.deps, planned, attemptId, lease));
  }

  private track(leadId: string, p: Promise<DeliveryOutcome>): Promise<DeliveryOutcome> {
    this.inFlight.add(p);
    const done = () => this.inFlight.delete(p);
    p.then(done, (err) => {
      done();
      this.deps.log.error({ err, leadId }, 'delivery failed with an internal error');
    });
    return p;
  }

  /** One recovery sweep (the delivery-recovery job, jobs/delivery-recovery.ts; tests). */
  sweep(): Promise<unknown> {
    if (!this.sweeping && !this.closed) {
      this.sweeping = recoverStale(this).finally(() => {
        this.sweeping = null;
        if (this.again) {
          this.again = false;
          void this.sweep();
        }
      });
    }
    return this.sweeping ?? Promise.resolve();
  }

  /**
   * A sweep now, or right after the one under way: leads were just released to it (approved in
   * the review queue, modules/quality/review-service.ts) and should not wait for the job's interval.
   */
  sweepSoon(): void {
    if (this.sweeping) this.again = true;
    else void this.sweep();
  }

  /** Stops sweeping and waits for the deliveries in progress. */
  async close() {
    this.closed = true;
    while (this.inFlight.size || this.sweeping) {
      await Promise.allSettled([...this.inFlight, this.sweeping]);
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    delivery: DeliveryRunner;
  }
}

/** app.delivery; close() drains deliveries (the sweep is the delivery-recovery job). */
export function installDistribution(app: App, opts: Pick<DeliveryDeps, 'onPartnerCall' | 'resumeRoute'> = {}) {
  const runner = new DeliveryRunner({
    db: app.db,
    log: app.log,
    client: createPartnerClient({ allowedNetworks: app.config.partnerAllowedNetworks }),
    ...opts,
  });
  app.decorate('delivery', runner);
  app.addHook('onClose', async () => {
    await runner.close();
    await runner.deps.client.close();
  });
}
