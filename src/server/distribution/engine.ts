// STUB — to be written (issue 4, routing engine). Interface fixed; see the brief.
import type { DeliveryDeps, DeliveryOutcome } from './runner.js';

export interface RouteOverride {
  /** Route through this flow instead of the lead's own (redeliver). */
  flowId?: string;
  /** Offer the lead to this one partner only (redeliver). */
  partnerId?: string;
  /** Resuming after a crash: skip partners this lead was already offered to. */
  resume?: boolean;
}

export async function deliverLead(_deps: DeliveryDeps, _leadId: string, _override: RouteOverride = {}): Promise<DeliveryOutcome> {
  throw new Error('engine not written yet');
}
