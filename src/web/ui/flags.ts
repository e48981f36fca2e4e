import type { paths } from '../api/schema';

type Partner = paths['/api/partners/{id}']['get']['responses'][200]['content']['application/json'];
export type Flag = Partner['quality']['refuse_flags'][number];

/**
 * What each fraud flag is called on screen, and what it means. The server's own words (GET
 * /api/quality/settings) need quality:view, which a screen such as the partner editor may not
 * hold; a Record, so a new flag in the API (npm run gen:api) needs its words here.
 */
export const FLAG_INFO: Record<Flag, { label: string; description: string }> = {
  phone_country: {
    label: 'Phone from another country',
    description: "The phone number belongs to another country than the lead's",
  },
  phone_type: {
    label: 'Not a mobile or fixed line',
    description: 'The phone number is valid but not a mobile or fixed line (e.g. VoIP, toll-free, premium rate, pager)',
  },
  disposable_email: {
    label: 'Disposable email',
    description: 'The email domain (or a parent) is a disposable mailbox provider',
  },
  ip_country: {
    label: 'IP from another country',
    description: "The IP address is registered to another country than the lead's",
  },
  velocity_ip: {
    label: 'Many leads from this IP',
    description: "More leads from this IP address within the provider's velocity window than its limit",
  },
  velocity_phone: {
    label: 'Many leads with this phone',
    description: "More leads with this phone number within the provider's velocity window than its limit",
  },
  velocity_email_domain: {
    label: 'Many leads from this email domain',
    description: "More leads with this email domain within the provider's velocity window than its limit",
  },
};

export const FLAG_LABELS = Object.fromEntries(
  Object.entries(FLAG_INFO).map(([flag, info]) => [flag, info.label]),
) as Record<Flag, string>;

/** Choices for a select, in the server's order. */
export const FLAG_OPTIONS = (Object.keys(FLAG_LABELS) as Flag[]).map((value) => ({ value, label: FLAG_LABELS[value] }));

/** A reason with the flag names it quotes ("refuses flagged leads (ip_country)") in their screen words. */
export const withFlagLabels = (reason: string) =>
  reason.replace(/\b[a-z_]+\b/g, (w) => (w in FLAG_LABELS ? FLAG_LABELS[w as Flag] : w));
