import type { LeadForPartner } from './integrations/kind.js';

// Rendering of a partner integration's body template and URL, and dot-path reads of the
// partner's JSON answer. Templates were validated when saved (partners/service.ts): every
// placeholder names a known lead field; anything else is left as written.

/** Lead fields a body template may name as {{lead.<field>}}. */
export const LEAD_TEMPLATE_FIELDS = [
  'id',
  'first_name',
  'last_name',
  'email',
  'phone',
  'country',
  'ip',
  'language',
  'funnel',
  'sub_id1',
  'sub_id2',
  'sub_id3',
  'sub_id4',
  'sub_id5',
] as const;

const LEAD_FIELDS = new Set<string>(LEAD_TEMPLATE_FIELDS);
const PLACEHOLDER = /\{\{lead\.([A-Za-z0-9_]+)\}\}/g;
const WHOLE_PLACEHOLDER = /^\{\{lead\.([A-Za-z0-9_]+)\}\}$/;

/** The field's value; undefined for a name that is no lead field (kept as written). */
function fieldValue(lead: LeadForPartner, name: string): string | null | undefined {
  return LEAD_FIELDS.has(name) ? lead[name as keyof LeadForPartner] : undefined;
}

function renderString(s: string, lead: LeadForPartner, encode: (v: string) => string): string {
  if (!s.includes('{{')) return s;
  return s.replace(PLACEHOLDER, (whole, name: string) => {
    const v = fieldValue(lead, name);
    return v === undefined ? whole : encode(v ?? '');
  });
}

const asIs = (v: string) => v;

/**
 * A string that is exactly one placeholder becomes the field's value (null stays JSON null, so
 * a partner can tell "no value" from ""); placeholders inside longer strings become text.
 */
export function renderValue(value: unknown, lead: LeadForPartner): unknown {
  if (typeof value === 'string') {
    const whole = WHOLE_PLACEHOLDER.exec(value);
    if (whole) {
      const v = fieldValue(lead, whole[1]);
      if (v !== undefined) return v;
    }
    return renderString(value, lead, asIs);
  }
  if (Array.isArray(value)) return value.map((v) => renderValue(v, lead));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // defineProperty: a template key "__proto__" stays a plain key of the JSON sent
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: renderValue(v, lead),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[k] = renderValue(v, lead);
    }
    return out;
  }
  return value;
}

/**
 * Placeholders in a URL are replaced URL-encoded (null → ""). Throws when the filled URL's
 * scheme, host or port is not the template's own fixed one: a lead's value never chooses where
 * it is sent (integrations saved before that was checked included).
 */
export function renderUrl(url: string, lead: LeadForPartner): string {
  const filled = renderString(url, lead, encodeURIComponent);
  const problem = originProblem(
    fixedOrigin((sentinel) =>
      url.replace(PLACEHOLDER, (whole, name: string) => (LEAD_FIELDS.has(name) ? sentinel : whole)),
    ),
    filled,
  );
  if (problem) throw new Error(problem);
  return filled;
}

// Two values no real one is, in the characters every URL part keeps as written (host names are
// lowercased): where a placeholder lands is seen by how the URL parses once filled, the way the
// call itself will parse it (WHATWG: "\\" is "/" for http, "x@" is userinfo, "h.:80" a host…).
const SENTINELS = ['lgmacroqzxwv', 'lgmacrojkyvb'] as const;
const MACROS_IN_ORIGIN = 'macros may not be in the scheme, host or port';

/**
 * The scheme://host:port a URL template sends to whatever its macros hold, or why it has none.
 * `fill(value)` is the template with every macro replaced by `value` (as it would be, encoded).
 * Fixed means: filled with either sentinel it parses as http(s), to one origin, naming neither.
 */
export function fixedOrigin(fill: (value: string) => string): { origin: string } | { problem: string } {
  const parsed: URL[] = [];
  for (const sentinel of SENTINELS) {
    try {
      parsed.push(new URL(fill(sentinel)));
    } catch {
      return { problem: 'is not a URL (with its macros filled in)' };
    }
  }
  // protocol + host, not .origin: that is "null" for every scheme but http(s), hiding a macro there
  const [a, b] = parsed.map((u) => `${u.protocol}//${u.host}`);
  if (a !== b || SENTINELS.some((s) => a.includes(s))) return { problem: MACROS_IN_ORIGIN };
  if (parsed[0].protocol !== 'http:' && parsed[0].protocol !== 'https:')
    return { problem: 'must be an http or https URL' };
  return { origin: parsed[0].origin };
}

/** Why a filled URL may not be called: the template has no fixed origin, or the URL left it; null: it may. */
export function originProblem(template: ReturnType<typeof fixedOrigin>, filled: string): string | null {
  if ('problem' in template) return `the URL template: ${template.problem}`;
  let origin: string | null = null;
  try {
    origin = new URL(filled).origin;
  } catch {
    // not a URL: refused below
  }
  return origin === template.origin
    ? null
    : `the filled URL leaves the template's scheme, host or port (${template.origin})`;
}

/**
 * Whether a JSON value nests deeper than `max` levels (an object or array is one level). Walks
 * with its own stack: a stored template may be thousands of levels deep, which recursion (and
 * JSON.stringify) cannot take.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth === max) return true;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

/** "data.items.0.url" → a reader of that value (undefined when absent). "" reads nothing. */
export function compilePath(path: string): (root: unknown) => unknown {
  const keys = path.split('.');
  return (root) => {
    let cur = root;
    for (const key of keys) {
      if (cur === null || typeof cur !== 'object') return undefined;
      if (Array.isArray(cur)) {
        if (!/^\d+$/.test(key)) return undefined;
        cur = cur[Number(key)];
      } else {
        // own properties only: "constructor" or "__proto__" must not reach Object.prototype
        if (!Object.hasOwn(cur, key)) return undefined;
        cur = (cur as Record<string, unknown>)[key];
      }
    }
    return cur;
  };
}
