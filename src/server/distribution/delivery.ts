import type { FastifyBaseLogger } from 'fastify';
import type { DB } from '../db/database.js';
import type { LeadStatus } from '../db/tables.js';
import type { PartnerCall, PartnerClient } from './partner-client.js';
import type { RouteOverride } from './route.js';

// What a delivery needs and what it ends in: shared by the engine, the runner that tracks
// deliveries and the recovery sweep.

export interface DeliveryDeps {
  db: DB;
  log: FastifyBaseLogger;
  /** One keep-alive HTTP client per app, closed with it. */
  client: PartnerClient;
  /** Told of every partner call's answer (the metrics); must not throw. */
  onPartnerCall?: (partner: { id: string; name: string }, call: PartnerCall) => void;
  /**
   * Where a resumed delivery goes when a feature sent the lead somewhere else than its own flow
   * (a re-injection job's flow or partners, and the job its attempts are marked with); {} otherwise.
   */
  resumeRoute?: (leadId: string) => Promise<RouteOverride>;
}

export interface DeliveryOutcome {
  status: LeadStatus;
  autologin_url: string | null;
  /** Why the lead is not delivered (for operators: names partners). */
  reason: string | null;
}

/** Runs a lead's delivery (the runner): what the recovery sweep resumes leads with. */
export interface Deliverer {
  readonly deps: DeliveryDeps;
  run(leadId: string, override?: RouteOverride): Promise<DeliveryOutcome>;
}
