import type { LeadFields } from '../../db/tables.js';
import type { FieldError } from '../../http/errors.js';
import type { OutboundRequest, RawAnswer } from '../../outbound/exchange.js';

// What an integration kind is: the contract every kind's file (http-api.ts, …) implements (the
// partner client's calls and the partner feature's checks and masking), and the lead and verdict
// it works with. Knows no kind (types.ts holds the union of them).

/** The lead fields a partner request can carry ({{lead.<field>}}). */
export type LeadForPartner = LeadFields & { id: string };

/** Answers are read up to this size; a partner streaming more is cut off. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** What a complete answer (or one capped at MAX_ANSWER_BYTES) says. */
export type Verdict =
  | { outcome: 'accepted'; reason: null; partner_lead_id?: string | null; autologin_url?: string | null }
  | { outcome: 'rejected'; reason: string; partner_lead_id?: string | null };

/** What every kind provides. `I`: its stored shape; `In`: what the API takes for it. */
export interface IntegrationKind<I, In = unknown> {
  /** The request for a lead. Pure (the test endpoint shows it too); throws when it cannot be built. */
  buildRequest(integration: I, lead: LeadForPartner): OutboundRequest;
  /** What an attempt shows as sent when buildRequest threw. */
  unbuiltRequest(integration: I): OutboundRequest;
  /** How long a call may take (ms): bounds the exchange and the lead's lease for it. */
  timeoutMs(integration: I): number;
  /** Accepted, or rejected with the reason. `text`: the answer's body as UTF-8. */
  readAnswer(integration: I, answer: RawAnswer, text: string): Verdict;

  /**
   * The form to store from what the API took: checked beyond its schema (one error per bad field
   * in `errors`), defaults filled, masked secrets resolved against `previous` (the stored one, on
   * PATCH and test-send) while the destination's origin is unchanged. `allowedNetworks`: PARTNER_ALLOWED_NETWORKS.
   */
  resolve(input: In, previous: I | null, errors: FieldError[], allowedNetworks: readonly string[]): I;
  /** The checks of `resolve` that need no stored integration, on a body its schema refused: whatever has the right type. */
  bodyErrors(raw: unknown, allowedNetworks: readonly string[], errors: FieldError[]): void;
  /** As API answers show it: secrets masked. */
  shown(integration: I): I;
  /** A request it made (buildRequest, as sent), as shown: its secrets masked. */
  shownRequest(integration: I, request: OutboundRequest): OutboundRequest;
  /** For audit details: no secret values. */
  forAudit(integration: I): Record<string, unknown>;
}
