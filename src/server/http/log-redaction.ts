import type { FastifyRequest } from 'fastify';

// What a request log line says the URL was. Tokens travel in URLs (a partner's postback URL is
// its credential; trackers put anything in query strings), so the logged URL is rebuilt from
// what the router DECODED: the matched route's pattern with its parameters, and the decoded
// query. A value is judged after decoding, so "%6cgp_…" is the token "lgp_…" and is redacted
// like it; a raw-URL pattern would miss every spelling it did not foresee.

const REDACTED = '[redacted]';
/** Route parameters that are credentials by declaration. */
const SECRET_PARAMS = new Set(['token']);
/** Query names that carry credentials in the wild (api_key=, token=, auth=, signature=…). */
const SECRET_NAMES = /token|secret|passw|api[-_]?key|auth|signature|^key$|^sig$/i;
/** Any of Leadgate's own token kinds, inside a decoded value. */
const OWN_TOKEN = /lg(?:ps|pk|[stpi])?_[0-9A-Za-z]{4,}/;

const decode = (s: string) => {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
};

const safeValue = (name: string, value: string) =>
  SECRET_NAMES.test(name) || OWN_TOKEN.test(value) ? REDACTED : encodeURIComponent(value);

function loggedQuery(raw: string): string {
  if (!raw) return '';
  const parts = raw.split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const safeName = OWN_TOKEN.test(name) ? REDACTED : encodeURIComponent(name);
    return eq === -1 ? safeName : `${safeName}=${safeValue(name, decode(pair.slice(eq + 1)))}`;
  });
  return `?${parts.join('&')}`;
}

/** The request's URL as it may be logged: route parameters and query decoded, then judged. */
export function loggedUrl(req: FastifyRequest): string {
  const original = (req as { originalUrl?: string }).originalUrl ?? req.url;
  const q = original.indexOf('?');
  const query = loggedQuery(q === -1 ? '' : original.slice(q + 1));
  const route = req.routeOptions?.url;
  if (route) {
    const params = (req.params ?? {}) as Record<string, string>;
    const path = route.replace(/:([A-Za-z0-9_]+)|\*$/g, (_m, name: string | undefined) => {
      const key = name ?? '*';
      const value = String(params[key] ?? '');
      return SECRET_PARAMS.has(key) ? REDACTED : safeValue(key, value);
    });
    return path + query;
  }
  // No route matched: each segment is decoded and judged the same way.
  const rawPath = q === -1 ? original : original.slice(0, q);
  const path = rawPath
    .split('/')
    .map((segment) => (OWN_TOKEN.test(decode(segment)) ? REDACTED : segment))
    .join('/');
  return path + query;
}
