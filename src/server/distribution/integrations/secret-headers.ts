import type { FieldError } from '../../http/errors.js';

// Secret request headers, for any configured outgoing call (an integration, a status pull):
// names checked, values write-only (masked in answers), a masked value sent back standing for
// the stored one while the destination is the same.

// Header values often carry the partner's API key: they are write-only. Answers show a mask
// that can never be a real value (real values are Latin-1, the mask's "•" is not), so a mask
// sent back on PATCH is recognisable and means "keep what is stored" (rule 15: only while the
// destination's origin is unchanged, else a key could send the stored secret to a host of its choosing).
const MASK = '••••';
export const maskHeaderValue = (value: string) => (value.length > 8 ? MASK + value.slice(-4) : MASK);

export const maskHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskHeaderValue(v)]));

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/; // RFC 9110 field-value characters

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

/** What is wrong with a header name (seen: the lower-case names before it, added to); null: nothing. */
export function headerNameProblem(name: string, seen: Set<string>): string | null {
  if (!HEADER_NAME.test(name)) return "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~)";
  if (CLIENT_OWNED_HEADERS.has(name.toLowerCase()))
    return 'is set by the HTTP client itself (from the URL and body) and cannot be configured';
  if (seen.has(name.toLowerCase())) return 'repeats a header name (names are case-insensitive)';
  seen.add(name.toLowerCase());
  return null;
}

/**
 * Header values as sent, a masked one standing for the stored value of that header while the
 * destination is the same (else an error asking for it again). Errors are named `<prefix>.<header>`.
 */
export function resolveSecretHeaders(
  input: Record<string, string>,
  previous: Record<string, string>,
  sameDestination: boolean,
  prefix: string,
  errors: FieldError[],
): Record<string, string> {
  const headers: Record<string, string> = Object.create(null); // a header named __proto__ stays a header
  const seen = new Set<string>();
  for (const [name, raw] of Object.entries(input)) {
    const field = `${prefix}.${name}`;
    const nameProblem = headerNameProblem(name, seen);
    if (nameProblem) {
      errors.push({ field, message: nameProblem });
      continue;
    }
    const storedName = Object.keys(previous).find((k) => k.toLowerCase() === name.toLowerCase());
    const stored = storedName === undefined ? undefined : previous[storedName];
    if (stored !== undefined && raw === maskHeaderValue(stored)) {
      if (sameDestination) headers[name] = stored;
      else errors.push({ field, message: 're-enter this secret: the destination changed (scheme, host or port)' });
    } else if (!HEADER_VALUE.test(raw)) {
      errors.push({
        field,
        message: raw.includes('•')
          ? 'is a masked value but this header has no stored value to keep; send the real value'
          : 'holds a character a header value cannot carry (line breaks, control or non-Latin-1 characters)',
      });
    } else headers[name] = raw;
  }
  return headers;
}
