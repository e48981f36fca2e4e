// STUB — to be written (issue 4, partner client). Interface fixed; see the brief.
import type { StoredIntegration } from '../modules/partners/schemas.js';

/** The lead fields a partner request can carry ({{lead.<field>}}). */
export interface LeadForPartner {
  id: string;
  first_name: string;
  last_name: string;
  email: string;
  phone: string;
  country: string;
  ip: string;
  language: string | null;
  funnel: string | null;
  sub_id1: string | null;
  sub_id2: string | null;
  sub_id3: string | null;
  sub_id4: string | null;
  sub_id5: string | null;
}

export interface PartnerRequest {
  method: string;
  url: string;
  /** As sent (values in full: never log this). */
  headers: Record<string, string>;
  body: string | null;
}

export interface PartnerCall {
  request: PartnerRequest;
  /** null when no answer came (timeout, connection error). */
  response: { status: number; headers: Record<string, string>; body: string; truncated: boolean } | null;
  outcome: 'accepted' | 'rejected' | 'timeout' | 'error';
  /** Why it is not accepted, in words an operator understands; null when accepted. */
  reason: string | null;
  duration_ms: number;
  partner_lead_id: string | null;
  autologin_url: string | null;
}

export interface PartnerClient {
  call(integration: StoredIntegration, lead: LeadForPartner): Promise<PartnerCall>;
  close(): Promise<void>;
}

export function createPartnerClient(): PartnerClient {
  return {
    call: async () => {
      throw new Error('partner client not written yet');
    },
    close: async () => {},
  };
}
