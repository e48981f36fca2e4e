import type { FieldError } from '../../http/errors.js';
import { checkDestinationUrl } from '../../outbound/guard.js';

// A configured destination URL (an integration's, a status pull's): checked when saved, and its
// origin, which a stored secret stays bound to.

/** Pushes an error named `field` when the URL is not one the server may call. */
export function checkUrl(url: string, allowedNetworks: readonly string[], errors: FieldError[], field: string) {
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    // reported below
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname) {
    errors.push({ field, message: 'must be an absolute http or https URL' });
    return;
  }
  // A lead's data fills the path and query, never the host: else a traffic provider's lead
  // (sub_id1 = "attacker.example") would choose where every lead of that partner is sent.
  if (parsed.hostname.includes('%7B%7B') || parsed.hostname.includes('{{')) {
    errors.push({ field, message: 'placeholders may fill the path and query only, not the host' });
    return;
  }
  // Addresses written literally are refused now, with the field named; host names are checked
  // by the outbound guard when a call connects (what they resolve to can change).
  const refusal = checkDestinationUrl(url, allowedNetworks);
  if (refusal) errors.push({ field, message: refusal.message });
}

/** scheme://host:port, normalised (case, default port, numeric spellings); null when not an http(s) URL. */
export function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}
