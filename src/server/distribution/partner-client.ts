import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { Agent } from 'undici';
import { describeError, exchange, type OutboundRequest, type RawAnswer } from '../outbound/exchange.js';
import { createOutboundAgent } from '../outbound/guard.js';
import { kindOf } from './integrations/index.js';
import { MAX_ANSWER_BYTES, type LeadForPartner, type StoredIntegration } from './integrations/types.js';

// The HTTP client that offers leads to partners. One keep-alive connection pool per client
// (per app): a partner taking a lead per second must not pay a TCP (and TLS) handshake each time.
// Its connections pass the outbound guard (outbound/guard.ts): a refused destination is an attempt
// that failed with the reason, and the partner is never called. What is sent and how the answer
// is read is the integration kind's (integrations/).
// Never logs: header values carry partners' API keys and bodies carry personal data.

export type PartnerRequest = OutboundRequest;

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

/** The part of the answer a PartnerCall carries (stored on attempts, shown to operators). */
export const SHOWN_ANSWER_BYTES = 64 * 1024;

/** The request an integration makes for a lead. Pure: used by the client and shown by the test endpoint. */
export const buildPartnerRequest = (integration: StoredIntegration, lead: LeadForPartner): PartnerRequest =>
  kindOf(integration).buildRequest(integration, lead);

export interface PartnerClientOptions {
  /** CIDRs the guard lets through although not public (PARTNER_ALLOWED_NETWORKS). */
  allowedNetworks: readonly string[];
}

export function createPartnerClient({ allowedNetworks }: PartnerClientOptions): PartnerClient {
  const agent = createOutboundAgent({
    allowedNetworks,
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    connections: 128, // per origin: bounds the sockets one busy partner can take
    pipelining: 1, // no pipelining: one slow answer must not hold up the leads queued behind it
    // The integration's timeout_ms (at most 60 s) bounds every call; undici's own connect
    // timeout (10 s by default) would cut a longer one short with a misleading reason.
    connectTimeout: 60_000,
  });
  return {
    call: (integration, lead) => callPartner(agent, integration, lead),
    close: () => agent.close(),
  };
}

type Outcome = Pick<PartnerCall, 'response' | 'outcome' | 'reason'> &
  Partial<Pick<PartnerCall, 'partner_lead_id' | 'autologin_url'>>;

async function callPartner(agent: Agent, integration: StoredIntegration, lead: LeadForPartner): Promise<PartnerCall> {
  const started = performance.now();
  const kind = kindOf(integration);
  let req: PartnerRequest;
  try {
    req = buildPartnerRequest(integration, lead);
  } catch (err) {
    // Only a URL that is no URL gets here (saved integrations are validated): a failed call, not a crash.
    req = kind.unbuiltRequest(integration);
    return finish(req, started, {
      response: null,
      outcome: 'error',
      reason: `request could not be built: ${describeError(err)}`,
    });
  }
  const { outcome, answer } = await send(agent, req, kind.timeoutMs(integration));
  if (outcome) return finish(req, started, outcome);
  const text = answer!.raw.toString('utf8');
  return finish(req, started, { response: showAnswer(answer!, text), ...kind.readAnswer(integration, answer!, text) });
}

function finish(request: PartnerRequest, started: number, o: Outcome): PartnerCall {
  return {
    request,
    duration_ms: Math.round(performance.now() - started),
    partner_lead_id: null,
    autologin_url: null,
    ...o,
  };
}

/** Sends the request; `outcome` is set when there is no complete answer to interpret. */
async function send(
  agent: Agent,
  req: PartnerRequest,
  timeoutMs: number,
): Promise<{ outcome?: Outcome; answer?: RawAnswer }> {
  const res = await exchange(agent, req, { timeoutMs, maxBytes: MAX_ANSWER_BYTES, peer: 'the partner' });
  if (!res.failure) return { answer: res.answer };
  const { answer, failure } = res;
  return {
    outcome: {
      response: answer && showAnswer(answer),
      outcome: failure.timedOut ? 'timeout' : 'error',
      reason: failure.reason,
    },
  };
}

function showAnswer(answer: RawAnswer, text?: string): NonNullable<PartnerCall['response']> {
  const { raw } = answer;
  // A cut inside a multi-byte character: StringDecoder holds back the partial bytes.
  const body =
    raw.length <= SHOWN_ANSWER_BYTES
      ? (text ?? raw.toString('utf8'))
      : new StringDecoder('utf8').write(raw.subarray(0, SHOWN_ANSWER_BYTES));
  return { status: answer.status, headers: answer.headers, body, truncated: answer.truncated };
}
