import type { IncomingMessage } from 'node:http';

// Access is decided from the route that runs, never from how the target is spelled. Targets
// whose meaning depends on who decodes them are refused outright, before routing: a proxy in
// front, the router and a handler could each read them differently (contract rule 12).

/** Where a refused target is routed: no route has this path, so nothing but the refusal runs. */
export const REFUSED_TARGET_PATH = '/api/__refused_request_target__';

const BAD_TARGET = Symbol('leadgate.badRequestTarget');

type Marked = IncomingMessage & { [BAD_TARGET]?: string };

/** Why a raw request target is refused, or null when it is a plain origin-form path. */
export function badRequestTarget(target: string): string | null {
  if (!target.startsWith('/') || target.startsWith('//')) {
    return 'The request target must be a path (origin-form, starting with a single "/"), not an absolute URL or "*".';
  }
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  if (/%(2f|5c)/i.test(path) || path.includes('\\')) return 'The path must not contain encoded slashes or backslashes.';
  if (/%00/.test(path) || /[\x00-\x20\x7f]/.test(path))
    return 'The path must not contain control characters or spaces.';
  for (const segment of path.split('/')) {
    // %2e is a dot: ".%2e" is "..", whichever layer decodes it.
    const plain = segment.replace(/%2e/gi, '.');
    if (plain === '.' || plain === '..') return 'The path must not contain dot segments ("." or "..").';
  }
  return null;
}

/** Fastify's rewriteUrl: a refused target is sent to a path no route has, marked with why. */
export function rewriteRequestTarget(req: IncomingMessage): string {
  const target = req.url ?? '';
  const reason = badRequestTarget(target);
  if (!reason) return target;
  (req as Marked)[BAD_TARGET] = reason;
  return REFUSED_TARGET_PATH;
}

/** The reason rewriteRequestTarget refused this request's target, if it did. */
export const refusedTargetReason = (req: IncomingMessage): string | undefined => (req as Marked)[BAD_TARGET];
