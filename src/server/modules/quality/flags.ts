// Fraud flags: what intake finds doubtful about a lead, computed in memory (no call leaves the
// server, each well under a millisecond), stored on the lead as a bit mask, and a quality score
// 0–100 from them with weights operators set (settings.ts).
import MailChecker from 'mailchecker';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { LeadFields } from '../../db/tables.js';
import { FLAGS, flagBit, type Flag } from '../../db/lead-flags.js';

// The names and bits live in db/lead-flags.ts (routing reads them too).
export { FLAGS, flagBit, flagNames, maskOf, type Flag } from '../../db/lead-flags.js';

export const FLAG_INFO: Record<Flag, { label: string; description: string; weight: number }> = {
  phone_country: {
    label: 'Phone from another country',
    description: "The phone number belongs to another country than the lead's",
    weight: 30,
  },
  phone_type: {
    label: 'Not a mobile or fixed line',
    description: 'The phone number is valid but not a mobile or fixed line (e.g. VoIP, toll-free, premium rate, pager)',
    weight: 20,
  },
  disposable_email: {
    label: 'Disposable email',
    description: 'The email domain (or a parent) is a disposable mailbox provider (the mailchecker list)',
    weight: 40,
  },
  ip_country: {
    label: 'IP from another country',
    description: "The IP address is registered to another country than the lead's (the shipped IP-to-country database)",
    weight: 25,
  },
  velocity_ip: {
    label: 'Many leads from this IP',
    description: "More leads from this IP address within the provider's velocity window than its limit",
    weight: 30,
  },
  velocity_phone: {
    label: 'Many leads with this phone',
    description: "More leads with this phone number within the provider's velocity window than its limit",
    weight: 30,
  },
  velocity_email_domain: {
    label: 'Many leads from this email domain',
    description: "More leads with this email domain within the provider's velocity window than its limit",
    weight: 30,
  },
};

function phoneFacts(e164: string): PhoneFacts | null {
  const parsed = parsePhoneNumberFromString(e164);
  return parsed ? { country: parsed.country ?? null, type: parsed.getType() ?? null } : null;
}

const PHONE_TYPES = new Set(['MOBILE', 'FIXED_LINE', 'FIXED_LINE_OR_MOBILE']);
const disposable = MailChecker.blacklist();

/** Whether a domain or one of its parents is a disposable mailbox provider's. */
export function isDisposableDomain(domain: string): boolean {
  let d = domain.toLowerCase();
  for (;;) {
    if (disposable.has(d)) return true;
    const dot = d.indexOf('.');
    if (dot < 0) return false;
    d = d.slice(dot + 1);
  }
}

/**
 * The flags a lead raises by itself (the velocity flags need the database: velocity.ts).
 * `ipCountry`: the address's country, or null when unknown (private ranges; the database still loading).
 */
/** What a parse of the lead's phone found (intake's validation parses it already: validate.ts). */
export interface PhoneFacts {
  country: string | null;
  type: string | null;
}

export function leadFlags(
  lead: Pick<LeadFields, 'email' | 'phone' | 'country' | 'ip'>,
  ipCountry: (ip: string) => string | null,
  known?: PhoneFacts,
) {
  let mask = 0;
  const phone = known ?? phoneFacts(lead.phone);
  if (phone) {
    if (phone.country && phone.country !== lead.country) mask |= flagBit('phone_country');
    if (!(phone.type && PHONE_TYPES.has(phone.type))) mask |= flagBit('phone_type');
  }
  const domain = lead.email.slice(lead.email.lastIndexOf('@') + 1);
  if (isDisposableDomain(domain)) mask |= flagBit('disposable_email');
  const country = ipCountry(lead.ip);
  if (country !== null && country !== lead.country) mask |= flagBit('ip_country');
  return mask;
}

export type Weights = Record<Flag, number>;
export const DEFAULT_WEIGHTS = Object.fromEntries(FLAGS.map((f) => [f, FLAG_INFO[f].weight])) as Weights;

/** 100 less the weights of the flags raised, at least 0. */
export function qualityScore(mask: number, weights: Partial<Weights>): number {
  let score = 100;
  FLAGS.forEach((f, i) => {
    if (mask & (1 << i)) score -= weights[f] ?? DEFAULT_WEIGHTS[f];
  });
  return Math.max(0, score);
}
