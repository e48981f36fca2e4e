// What an erasure replaces in text: every spelling of the subject's contacts it knows (as is, any
// case, URL-encoded; a phone also as its bare digits and with "%2B"), and in the records of the
// erased leads themselves their names too. Pure functions: the SQL is in queries.ts.

/** What erased text reads. */
export const ERASED = '[erased]';

/** The lead fields an erased lead's JSON records (events) carry under their own names. */
const LEAD_KEYS = new Set(['first_name', 'last_name', 'email', 'phone', 'ip']);

/** The spellings of contacts searched for with LIKE (lower case): what a stored text can hold. */
export function likeNeedles(emails: string[], phones: string[]): string[] {
  const out = new Set<string>();
  for (const e of emails) {
    out.add(e.toLowerCase());
    out.add(encodeURIComponent(e).toLowerCase());
  }
  // The digits alone also find "+49…", "%2B49…" and a partner's "0049…".
  for (const p of phones) out.add(p.replace(/\D/g, ''));
  return [...out].filter((n) => n.length >= 6);
}

/** A replacer for every spelling (longest first, so "+49…" goes before its digits). */
export function textScrubber(needles: string[]): (text: string) => string {
  const all = new Set<string>();
  for (const n of needles) {
    if (!n) continue;
    all.add(n);
    all.add(encodeURIComponent(n));
    if (n.startsWith('+')) all.add(`%2B${n.slice(1)}`);
  }
  const sorted = [...all].filter((n) => n.length >= 2).sort((a, b) => b.length - a.length);
  if (!sorted.length) return (text) => text;
  const re = new RegExp(sorted.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'gi');
  return (text) => text.replace(re, ERASED);
}

/** The contacts' spellings (with a phone's digits alone) for textScrubber. */
export function contactNeedles(emails: string[], phones: string[]): string[] {
  return [...emails, ...phones, ...phones.map((p) => p.replace(/\D/g, '')).filter((d) => d.length >= 6)];
}

/**
 * A JSON text with every string scrubbed; with `leadFields`, the lead's own fields (email, phone,
 * names, IP) replaced whatever they hold. Not JSON: scrubbed as text.
 */
export function scrubJson(text: string, scrub: (t: string) => string, leadFields = false): string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return scrub(text);
  }
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === 'string') return leadFields && key && LEAD_KEYS.has(key) && v ? ERASED : scrub(v);
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v !== null && typeof v === 'object')
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  const out = JSON.stringify(walk(value));
  // An object's keys are not walked: the text pass catches a contact there ("[erased]" keeps JSON valid).
  return scrub(out === JSON.stringify(value) ? text : out);
}
