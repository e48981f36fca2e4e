import { LEAD_TEMPLATE_FIELDS } from '../modules/partners/schemas.js';
import type { LeadForPartner } from './partner-client.js';

// Rendering of a partner integration's body template and URL, and dot-path reads of the
// partner's JSON answer. Templates were validated when saved (partners/service.ts): every
// placeholder names a known lead field; anything else is left as written.

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
      if (k === '__proto__') Object.defineProperty(out, k, { value: renderValue(v, lead), enumerable: true, writable: true, configurable: true });
      else out[k] = renderValue(v, lead);
    }
    return out;
  }
  return value;
}

/** Placeholders in a URL are replaced URL-encoded (null → ""). */
export const renderUrl = (url: string, lead: LeadForPartner) => renderString(url, lead, encodeURIComponent);

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
