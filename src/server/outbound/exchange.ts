import { request, type Agent } from 'undici';
import { DestinationRefusedError } from './guard.js';

// One HTTP exchange through an outbound-guarded agent (guard.ts): partner calls, webhooks,
// postbacks and status pulls all send with this. One deadline covers the whole exchange, and
// the answer is read up to a size. Never logs: requests carry secrets and answers personal data.

export interface OutboundRequest {
  method: string;
  url: string;
  /** As sent (values in full: never log this). */
  headers: Record<string, string>;
  body: string | null;
}

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  raw: Buffer;
  /** More came than maxBytes, or the body broke off. */
  truncated: boolean;
}

export type Exchanged =
  | { answer: RawAnswer; failure?: undefined }
  /** No complete answer: `answer` holds what arrived (status and headers, part of the body), if anything. */
  | { answer: RawAnswer | null; failure: { timedOut: boolean; reason: string } };

const EMPTY = Buffer.alloc(0);

/** `peer` names the other side in error reasons ("connection reset by the partner"). */
export async function exchange(
  agent: Agent,
  req: OutboundRequest,
  opts: { timeoutMs: number; maxBytes: number; peer?: string },
): Promise<Exchanged> {
  const { timeoutMs, maxBytes, peer } = opts;
  // Connect, headers and body share the deadline: a server trickling its answer byte by byte
  // is as late as one that never answers.
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  let answer: RawAnswer | null = null;
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    const res = await request(req.url, {
      dispatcher: agent,
      method: req.method as 'POST' | 'GET' | 'PUT',
      headers: req.headers,
      body: req.body,
      signal: controller.signal,
    });
    answer = { status: res.statusCode, headers: flattenHeaders(res.headers), raw: EMPTY, truncated: false };
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      if (size + chunk.length > maxBytes) {
        chunks.push(chunk.subarray(0, maxBytes - size));
        size = maxBytes;
        answer.truncated = true;
        break; // leaving the loop destroys the body (and that connection)
      }
      chunks.push(chunk);
      size += chunk.length;
    }
    answer.raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
    return { answer };
  } catch (err) {
    if (!answer)
      return {
        answer: null,
        failure: { timedOut, reason: timedOut ? `no answer within ${timeoutMs} ms` : describeError(err, peer) },
      };
    // The status and headers came, the body did not finish: keep what arrived.
    answer.raw = Buffer.concat(chunks, size);
    answer.truncated = true;
    return {
      answer,
      failure: {
        timedOut,
        reason: timedOut
          ? `answer not complete within ${timeoutMs} ms (HTTP ${answer.status})`
          : `answer broke off: ${describeError(err, peer)}`,
      },
    };
  } finally {
    clearTimeout(timer);
  }
}

function flattenHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

const ERROR_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by PEER',
  EPIPE: 'connection closed by PEER while sending',
  UND_ERR_SOCKET: 'connection closed by PEER',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed (DNS)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  CERT_HAS_EXPIRED: 'TLS certificate has expired',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'TLS certificate is self-signed',
  SELF_SIGNED_CERT_IN_CHAIN: 'TLS certificate chain is self-signed',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'TLS certificate cannot be verified',
  ERR_TLS_CERT_ALTNAME_INVALID: 'TLS certificate is not valid for this host name',
  UND_ERR_INVALID_ARG: 'request refused by the HTTP client',
};

/** "connection refused (ECONNREFUSED)": the words an operator needs, then the code to search for. */
export function describeError(err: unknown, peer = 'the server'): string {
  if (err instanceof DestinationRefusedError) return err.message; // already in an operator's words
  const e = err as { code?: string; message?: string; cause?: { code?: string } } | null;
  const code = e?.code ?? e?.cause?.code;
  const words = code && ERROR_WORDS[code]?.replace('PEER', peer);
  if (words) return code === 'UND_ERR_INVALID_ARG' ? `${words}: ${e?.message} (${code})` : `${words} (${code})`;
  const message = e?.message || String(err);
  return code ? `${message} (${code})` : message;
}
