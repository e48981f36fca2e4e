import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { Agent } from 'undici';
import type { StoredIntegration } from '../modules/partners/schemas.js';
import type { LeadFields } from '../db/tables.js';
import { describeError, exchange, type OutboundRequest, type RawAnswer } from '../outbound/exchange.js';
import { createOutboundAgent } from '../outbound/guard.js';
import { compilePath, renderUrl, renderValue } from './template.js';

// The HTTP client that offers leads to partners. One keep-alive connection pool per client
// (per app): a partner taking a lead per second must not pay a TCP (and TLS) handshake each time.
// Its connections pass the outbound guard (outbound/guard.ts): a refused destination is an attempt
// that failed with the reason, and the partner is never called.
// Never logs: header values carry partners' API keys and bodies carry personal data.

/** The lead fields a partner request can carry ({{lead.<field>}}). */
export type LeadForPartner = LeadFields & { id: string };

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

/** Answers are read up to this size; a partner streaming more is cut off. */
export const MAX_ANSWER_BYTES = 1024 * 1024;
/** The part of the answer a PartnerCall carries (stored on attempts, shown to operators). */
export const SHOWN_ANSWER_BYTES = 64 * 1024;

// Headers that frame the message or manage the connection: the client sets them (from the URL
// and body) or refuses them (undici throws on transfer-encoding, upgrade, expect…), so an
// operator's value for them is not sent. The request shown with each call lists what was sent.
export const CLIENT_OWNED_HEADERS = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

/** The request an integration makes for a lead. Pure: used by the client and shown by the test endpoint. */
export function buildPartnerRequest(integration: StoredIntegration, lead: LeadForPartner): PartnerRequest {
  let url = renderUrl(integration.url, lead);
  const headers: Record<string, string> = {};
  let body: string | null = null;
  const rendered = renderValue(integration.body_template ?? {}, lead) as Record<string, unknown>;
  if (integration.method === 'GET') {
    const u = new URL(url);
    for (const [k, v] of Object.entries(rendered)) {
      // Top-level scalars only: a query string has no nesting. null (no value) leaves the parameter out.
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') u.searchParams.append(k, String(v));
    }
    url = u.href;
  } else {
    body = JSON.stringify(rendered);
    if (!hasHeader(integration.headers, 'content-type')) headers['content-type'] = 'application/json';
  }
  for (const [name, value] of Object.entries(integration.headers)) {
    if (!CLIENT_OWNED_HEADERS.has(name.toLowerCase())) headers[name] = value;
  }
  return { method: integration.method, url, headers, body };
}

function hasHeader(headers: Record<string, string>, lowerName: string) {
  for (const name of Object.keys(headers)) if (name.toLowerCase() === lowerName) return true;
  return false;
}

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
  let req: PartnerRequest;
  try {
    req = buildPartnerRequest(integration, lead);
  } catch (err) {
    // Only a URL that is no URL gets here (saved integrations are validated): a failed call, not a crash.
    req = { method: integration.method, url: integration.url, headers: {}, body: null };
    return finish(req, started, {
      response: null,
      outcome: 'error',
      reason: `request could not be built: ${describeError(err)}`,
    });
  }
  const { outcome, answer } = await send(agent, req, integration.timeout_ms);
  return finish(req, started, outcome ?? interpret(integration, answer!));
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

/** Accepted, or rejected with the reason, from a complete (or 1 MiB-capped) answer. */
function interpret(integration: StoredIntegration, answer: RawAnswer): Outcome {
  const text = answer.raw.toString('utf8');
  const response = showAnswer(answer, text);
  const reject = (reason: string, extra: Partial<Outcome> = {}): Outcome => ({
    response,
    outcome: 'rejected',
    reason,
    ...extra,
  });
  if (answer.status < 200 || answer.status > 299) {
    // Redirects are not followed (a POST must not be replayed elsewhere); say where it pointed,
    // since "http:// instead of https://" is the usual cause.
    const location = answer.status >= 300 && answer.status < 400 ? answer.headers.location : undefined;
    return reject(`HTTP ${answer.status}${location ? ` (redirects to ${excerpt(location)})` : ''}: ${excerpt(text)}`);
  }
  const { success_path, lead_id_path, autologin_path } = integration;
  if (!success_path && !lead_id_path && !autologin_path) return { response, outcome: 'accepted', reason: null };

  if (answer.truncated) return reject(`answer is larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB: not read in full`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return reject(`answer is not JSON: ${excerpt(text)}`);
  }
  const leadId = lead_id_path ? compilePath(lead_id_path)(json) : undefined;
  const partner_lead_id = typeof leadId === 'string' || typeof leadId === 'number' ? String(leadId) : null;

  if (success_path) {
    const flag = compilePath(success_path)(json);
    if (!isTruthy(flag)) {
      const said = errorMessage(json);
      const what =
        flag === undefined
          ? `no success value at "${success_path}"`
          : `success is ${JSON.stringify(flag)} at "${success_path}"`;
      return reject(said ? `${what} (error: ${said})` : what, { partner_lead_id });
    }
  }
  let autologin_url: string | null = null;
  if (autologin_path) {
    const link = compilePath(autologin_path)(json);
    if (link === undefined || link === null || link === '')
      return reject(`no autologin URL at ${autologin_path}`, { partner_lead_id });
    if (!isHttpUrl(link))
      return reject(`autologin value at ${autologin_path} is not an http(s) URL: ${excerpt(JSON.stringify(link))}`, {
        partner_lead_id,
      });
    autologin_url = link;
  }
  return { response, outcome: 'accepted', reason: null, partner_lead_id, autologin_url };
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

const FALSY_WORDS = new Set(['0', 'false', 'no', 'error', 'fail', 'failed']);

/** The partner's "accepted" flag: true, a non-zero number, or a non-empty string that is not a "no" word. */
function isTruthy(v: unknown): boolean {
  if (v === true) return true;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.trim() !== '' && !FALSY_WORDS.has(v.trim().toLowerCase());
  return false;
}

function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

// Where partners usually say why they refused a lead.
const ERROR_KEYS = [
  'error',
  'message',
  'error_message',
  'errorMessage',
  'msg',
  'reason',
  'errors',
  'detail',
  'description',
];

function errorMessage(json: unknown, depth = 0): string | null {
  if (typeof json === 'string') return json ? excerpt(json) : null;
  if (depth > 2 || json === null || typeof json !== 'object') return null;
  if (Array.isArray(json)) return json.length ? errorMessage(json[0], depth + 1) : null;
  for (const key of ERROR_KEYS) {
    if (!Object.hasOwn(json, key)) continue;
    const v = (json as Record<string, unknown>)[key];
    const found = typeof v === 'number' ? String(v) : errorMessage(v, depth + 1);
    if (found) return found;
  }
  return null;
}

const excerpt = (text: string, max = 200) => {
  const t = text.trim();
  return t === '' ? '(empty answer)' : t.length > max ? `${t.slice(0, max)}…` : t;
};
