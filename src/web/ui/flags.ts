import type { paths } from '../api/schema';

type Partner = paths['/api/partners/{id}']['get']['responses'][200]['content']['application/json'];
export type Flag = Partner['quality']['refuse_flags'][number];

/**
 * What each fraud flag is called on screen. The server's own words (GET /api/quality/settings)
 * need quality:view, which a screen such as the partner editor may not hold; a Record, so a new
 * flag in the API (npm run gen:api) needs its words here.
 */
export const FLAG_LABELS: Record<Flag, string> = {
  phone_country: 'Phone from another country',
  phone_type: 'Not a mobile or fixed line',
  disposable_email: 'Disposable email',
  ip_country: 'IP from another country',
  velocity_ip: 'Many leads from this IP',
  velocity_phone: 'Many leads with this phone',
  velocity_email_domain: 'Many leads from this email domain',
};

/** Choices for a select, in the server's order. */
export const FLAG_OPTIONS = (Object.keys(FLAG_LABELS) as Flag[]).map((value) => ({ value, label: FLAG_LABELS[value] }));

/** A reason with the flag names it quotes ("refuses flagged leads (ip_country)") in their screen words. */
export const withFlagLabels = (reason: string) =>
  reason.replace(/\b[a-z_]+\b/g, (w) => (w in FLAG_LABELS ? FLAG_LABELS[w as Flag] : w));
