import { checkDestinationUrl } from '../../outbound/guard.js';
import { CLIENT_OWNED_HEADERS } from '../../distribution/integrations/http-api.js';
import type { IntegrationInput } from '../../distribution/integrations/index.js';
import type { StoredIntegration } from '../../distribution/integrations/types.js';
import { LEAD_TEMPLATE_FIELDS } from '../../distribution/template.js';
import type { FieldError } from '../../http/errors.js';
import { dealErrors } from '../../distribution/prices.js';
import { isTimezone } from '../operators/service.js';

// The checks a partner's body passes (integration: URL, headers, templates; rules: caps, deal)
// and the masking of its secret header values: used by the use cases in service.ts, the route
// config's moreChecks and the test send.

// Header values often carry the partner's API key: they are write-only. Answers show a mask
// that can never be a real value (real values are Latin-1, the mask's "•" is not), so a mask
// sent back on PATCH is recognisable and means "keep what is stored" (rule 15: only while the
// destination's origin is unchanged, else a key could send the stored secret to a host of its choosing).
const MASK = '••••';
export const maskHeaderValue = (value: string) => (value.length > 8 ? MASK + value.slice(-4) : MASK);

const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/; // RFC 9110 field-value characters
const PLACEHOLDER = /\{\{(.*?)\}\}/g;
const KNOWN_FIELDS = new Set<string>(LEAD_TEMPLATE_FIELDS);
const MAX_TEMPLATE_DEPTH = 20;

export const maskHeaders = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, maskHeaderValue(v)]));

/** For audit details: which headers are set, never their values. */
export const integrationForAudit = (i: StoredIntegration) => ({ ...i, headers: Object.keys(i.headers) });

export function checkUrl(
  url: string,
  allowedNetworks: readonly string[],
  errors: FieldError[],
  field = 'integration.url',
) {
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

const childPath = (path: string, key: string | number) =>
  typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`;

/** Every {{…}} placeholder in the template must be {{lead.<known field>}}. */
function checkTemplate(value: unknown, path: string, depth: number, errors: FieldError[]) {
  if (errors.length >= 50) return;
  if (typeof value === 'string') {
    for (const m of value.matchAll(PLACEHOLDER)) {
      const name = /^lead\.([A-Za-z0-9_]+)$/.exec(m[1])?.[1];
      if (!name || !KNOWN_FIELDS.has(name)) {
        errors.push({
          field: path,
          message: `placeholder ${m[0]} names no lead field; use {{lead.<field>}} with one of: ${LEAD_TEMPLATE_FIELDS.join(', ')}`,
        });
        return;
      }
    }
    if (value.replace(PLACEHOLDER, '').includes('{{'))
      errors.push({ field: path, message: 'has a {{ without its closing }}' });
    return;
  }
  if (!value || typeof value !== 'object') return;
  if (depth > MAX_TEMPLATE_DEPTH) {
    errors.push({ field: path, message: `nests deeper than ${MAX_TEMPLATE_DEPTH} levels` });
    return;
  }
  if (Array.isArray(value)) value.forEach((v, i) => checkTemplate(v, childPath(path, i), depth + 1, errors));
  else for (const [k, v] of Object.entries(value)) checkTemplate(v, childPath(path, k), depth + 1, errors);
}

/** What is wrong with a header name (seen: the lower-case names before it, added to); null: nothing. */
function headerNameProblem(name: string, seen: Set<string>): string | null {
  if (!HEADER_NAME.test(name)) return "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~)";
  if (CLIENT_OWNED_HEADERS.has(name.toLowerCase()))
    return 'is set by the HTTP client itself (from the URL and body) and cannot be configured';
  if (seen.has(name.toLowerCase())) return 'repeats a header name (names are case-insensitive)';
  seen.add(name.toLowerCase());
  return null;
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The checks below (URL, header names, template placeholders, time zone, caps) on a body its
 * schema refused, for the same 400 (route config moreChecks): whatever has the right type is
 * checked, the rest is the schema's to name. Header values are left to the full check (a masked
 * value needs the stored partner).
 */
export function partnerBodyChecks(body: unknown, allowedNetworks: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(body)) return errors;
  const wh = body.working_hours;
  const cap = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null);
  checkPartnerRules(
    {
      working_hours: isObject(wh) && typeof wh.timezone === 'string' ? { timezone: wh.timezone } : null,
      daily_cap: cap(body.daily_cap),
      hourly_cap: cap(body.hourly_cap),
      total_cap: cap(body.total_cap),
      deal: body.deal,
    },
    errors,
  );
  const i = body.integration;
  if (!isObject(i)) return errors;
  if (typeof i.url === 'string') checkUrl(i.url, allowedNetworks, errors);
  if (isObject(i.headers)) {
    const seen = new Set<string>();
    for (const name of Object.keys(i.headers)) {
      const problem = headerNameProblem(name, seen);
      if (problem) errors.push({ field: `integration.headers.${name}`, message: problem });
    }
  }
  if (i.body_template !== undefined) checkTemplate(i.body_template, 'integration.body_template', 1, errors);
  return errors;
}

/**
 * Validates an integration beyond its schema and resolves masked header values against the
 * stored ones (`previous`, on PATCH and test-send) while the destination's origin is unchanged.
 * `allowedNetworks`: PARTNER_ALLOWED_NETWORKS. Pushes one error per bad field; returns the form to store.
 */
export function resolveIntegration(
  input: IntegrationInput,
  previous: StoredIntegration | null,
  errors: FieldError[],
  allowedNetworks: readonly string[],
): StoredIntegration {
  checkUrl(input.url, allowedNetworks, errors);
  const origin = originOf(input.url);
  const sameDestination = previous !== null && origin !== null && origin === originOf(previous.url);
  const headers = resolveSecretHeaders(
    (input.headers ?? {}) as Record<string, string>,
    previous?.headers ?? {},
    sameDestination,
    'integration.headers',
    errors,
  );
  const body_template = (input.body_template ?? {}) as Record<string, unknown>;
  checkTemplate(body_template, 'integration.body_template', 1, errors);
  return {
    method: input.method ?? 'POST',
    url: input.url,
    headers,
    body_template,
    success_path: input.success_path ?? '',
    lead_id_path: input.lead_id_path ?? '',
    autologin_path: input.autologin_path ?? '',
    timeout_ms: input.timeout_ms ?? 5000,
  };
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

/** Checks shared by create and update, on the values the partner would end up with (the deal as sent: it is replaced whole). */
export function checkPartnerRules(
  p: {
    working_hours: { timezone: string } | null;
    daily_cap: number | null;
    hourly_cap: number | null;
    total_cap: number | null;
    deal?: unknown;
  },
  errors: FieldError[],
) {
  if (p.working_hours && !isTimezone(p.working_hours.timezone)) {
    errors.push({
      field: 'working_hours.timezone',
      message: `"${p.working_hours.timezone}" is not an IANA time zone (e.g. Europe/Berlin)`,
    });
  }
  if (p.daily_cap !== null && p.total_cap !== null && p.total_cap < p.daily_cap) {
    errors.push({ field: 'total_cap', message: `must be at least the daily cap (${p.daily_cap})` });
  }
  if (p.daily_cap !== null && p.hourly_cap !== null && p.hourly_cap > p.daily_cap) {
    errors.push({ field: 'hourly_cap', message: `must be at most the daily cap (${p.daily_cap})` });
  }
  errors.push(...dealErrors(p.deal));
}
