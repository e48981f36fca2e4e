// Where sign-in returns to. The target comes from the URL (`/login?next=…`), which anyone can
// craft and send, so it is only ever a path on this site: never another origin (no open redirect).

/** Paths that are never a return target: they would send a signed-in operator back to a form. */
const SIGNED_OUT_PAGES = ['/login', '/setup', '/portal/invitation'];

/** The login page, remembering the page (path, query and fragment) that asked for a session. */
export function loginPath(at: { pathname: string; search: string; hash: string }): string {
  const next = `${at.pathname}${at.search}${at.hash}`;
  return next === '/' || SIGNED_OUT_PAGES.includes(at.pathname) ? '/login' : `/login?next=${encodeURIComponent(next)}`;
}

/**
 * `next` when it is a relative path on this origin, else the Overview. Refused: anything not
 * starting with a single `/` (`//host` and `/\host` are other hosts to a browser, `https:` a
 * scheme), and control characters (browsers drop tabs and newlines, so `/\t/host` is `//host`).
 */
export function returnTarget(next: string | null): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.includes('\\')) return '/';
  if (/[\u0000-\u001f\u007f]/.test(next)) return '/';
  // The last word goes to the URL parser a browser uses: the target must stay on a placeholder origin.
  const base = 'http://leadgate.invalid';
  let url: URL;
  try {
    url = new URL(next, base);
  } catch {
    return '/';
  }
  if (url.origin !== base || SIGNED_OUT_PAGES.includes(url.pathname)) return '/';
  return next;
}

/**
 * Where a sign-in lands: a provider user in the portal (its page asked for, or the portal's
 * start), never in the operator dashboard; an operator in the dashboard, never in the portal.
 */
export function landing(kind: 'operator' | 'provider', target: string): string {
  const portal = target === '/portal' || target.startsWith('/portal/') || target.startsWith('/portal?');
  if (kind === 'provider') return portal ? target : '/portal';
  return portal ? '/' : target;
}
