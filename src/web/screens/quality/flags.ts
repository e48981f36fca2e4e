// The fraud flags intake raises on a lead, as the dashboard names them. Their labels come from
// GET /api/quality/settings for a role holding quality:view; a role without it is never sent
// there (it would answer 403) and reads the same labels from the map below, kept in step with
// the server's (a flag the schema adds fails type-checking here until it has one).
// No runtime imports here (the Leads filters' unit test reads this file); the hook: useFlagInfo.ts.
import type { paths } from '../../api/schema';

export type QualitySettings = paths['/api/quality/settings']['get']['responses'][200]['content']['application/json'];
export type Flag = QualitySettings['flags'][number]['name'];
export interface FlagInfo {
  label: string;
  description: string;
}

/** The labels when the settings cannot be read, in the server's order. */
export const FLAG_FALLBACK: Record<Flag, FlagInfo> = {
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

export const FLAG_NAMES = Object.keys(FLAG_FALLBACK) as Flag[];
export const isFlag = (name: string): name is Flag => Object.hasOwn(FLAG_FALLBACK, name);

/** A score's colour: green from 80, yellow from 50, red below; grey when not scored. */
export const scoreColor = (score: number | null) =>
  score === null ? 'gray' : score >= 80 ? 'green' : score >= 50 ? 'yellow' : 'red';

/** "70", or "not scored" for a lead stored before scoring existed. */
export const scoreText = (score: number | null) => (score === null ? 'not scored' : String(score));
