// "View as provider": the operator's tab opens /portal#view-as=<token> in a new tab (without an
// opener, so it shares no sessionStorage). The token sits after #, which no request carries, so
// no server or proxy logs it; the new tab keeps it as its session and drops it from its address
// (and history) before anything renders.
import { session } from '../api/session';

const PREFIX = '#view-as=';

/** The address that opens the portal with a read-only view-as session. */
export const viewAsUrl = (token: string) => `${window.location.origin}/portal${PREFIX}${encodeURIComponent(token)}`;

/** Run once at start-up: adopts a view-as token from the address, then wipes it from there. */
export function adoptViewAs() {
  const { pathname, hash } = window.location;
  if (!hash.startsWith(PREFIX)) return;
  const token = decodeURIComponent(hash.slice(PREFIX.length));
  window.history.replaceState(null, '', pathname);
  if (pathname.startsWith('/portal') && token.startsWith('lgps_')) session.set(token);
}
