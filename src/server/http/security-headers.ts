import type { App } from '../types.js';

/**
 * The Content-Security-Policy of every answer: the dashboard (dist/web), Swagger UI at /api/docs,
 * and the API's JSON and problem+json answers alike (on those it only matters if a browser is
 * made to render one, and then it forbids everything a page could do).
 *
 * - Scripts only from this origin, never inline, never eval: the Vite build's index.html loads
 *   its entry as an external module and has no inline script, and Swagger UI's page loads three
 *   external files. script-src-attr 'none' also rules out onclick="…" attributes.
 * - style-src needs 'unsafe-inline': Mantine injects <style> elements at run time (its CSS
 *   variables and the theme), and a nonce would need index.html rendered per request (it is a
 *   static file). Inline style cannot run script; what it could do is leak page text through
 *   selectors that load URLs, and img-src, font-src and connect-src below keep every such load
 *   on this origin.
 * - img-src data:: the two-factor QR code is a data: URL, and Swagger UI's icons are data: SVGs.
 * - frame-ancestors 'none' (and X-Frame-Options DENY for older browsers): no page of ours
 *   is ever framed, so there is no clickjacking of the dashboard.
 * - No upgrade-insecure-requests (helmet's default has it): the server speaks plain http on
 *   loopback by default, and behind no TLS proxy that directive would send every asset request to
 *   an https:// address nobody answers.
 */
export const CONTENT_SECURITY_POLICY = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'", "'unsafe-inline'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/**
 * Every header, computed once: these are the answers helmet gives with the options it was
 * configured with before (no HSTS, X-Frame-Options DENY, Referrer-Policy no-referrer, the rest
 * its defaults), written here because @fastify/helmet rebuilt helmet's middleware, CSP parsing
 * included, on every request (a tenth of a key-authenticated lead read's time).
 *
 * - No Referer at all: links the API hands out carry tokens in their paths (postback URLs),
 *   and nothing here needs to know where a visitor came from.
 * - No HSTS from the application: by default it serves plain http on loopback, where browsers
 *   ignore the header anyway (RFC 6797 §8.1: only honoured over https). Where it runs behind a
 *   TLS-terminating proxy, HSTS belongs to that proxy, which knows the public host name and
 *   whether every subdomain really is on https (includeSubDomains would otherwise lock out any
 *   that is not, for a year).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-security-policy': Object.entries(CONTENT_SECURITY_POLICY)
    .map(([name, sources]) => `${name} ${sources.join(' ')}`)
    .join(';'),
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'DENY',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
});
const HEADER_LIST = Object.entries(SECURITY_HEADERS);

/**
 * Security headers on every answer, set before any other onRequest hook runs and on the raw
 * response, so an answer refused by a later hook (401, 403, 429, 503), an error, or the
 * not-found handler carries them too.
 */
export function installSecurityHeaders(app: App) {
  app.addHook('onRequest', (_req, reply, done) => {
    for (const [name, value] of HEADER_LIST) reply.raw.setHeader(name, value);
    done();
  });
}
