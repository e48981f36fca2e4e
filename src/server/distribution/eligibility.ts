// Whether a flow target may be offered a lead right now, before caps: the partner is usable,
// takes the lead's country and its quality (quality-rule.ts), and is inside its working hours.
// Pure functions (no database), so the calendar rules are unit-tested on their own.
import { qualityRefusal, type LeadQuality, type QualityCheck } from './quality-rule.js';

export interface Schedule {
  /** IANA zone (validated when saved). */
  timezone: string;
  /** ISO weekdays: 1 = Monday … 7 = Sunday. */
  days: number[];
  /** "HH:MM", 24-hour. */
  from: string;
  to: string;
}

const WEEKDAYS: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The ISO weekday and minute of the day at instant `ms` in `tz`. */
export function localWeekMinute(tz: string, ms: number): { weekday: number; minute: number } {
  let f = formatters.get(tz);
  if (!f) {
    if (formatters.size >= 1000) formatters.clear();
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      weekday: 'short',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(tz, f);
  }
  let weekday = 0;
  let hour = 0;
  let minute = 0;
  for (const part of f.formatToParts(new Date(ms))) {
    if (part.type === 'weekday') weekday = WEEKDAYS[part.value];
    else if (part.type === 'hour') hour = Number(part.value);
    else if (part.type === 'minute') minute = Number(part.value);
  }
  return { weekday, minute: hour * 60 + minute };
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/**
 * Open at instant `ms`? null = always open. from < to: from ≤ now < to on a listed day.
 * to < from spans midnight: the part after midnight belongs to the previous day (Friday
 * 22:00–02:00 is open Saturday 01:00 even when Saturday is not listed). from == to: all day on
 * the listed days. A zone Intl does not know counts as closed (it was validated when saved).
 */
export function isOpen(schedule: Schedule | null, ms: number): boolean {
  if (!schedule) return true;
  let now;
  try {
    now = localWeekMinute(schedule.timezone, ms);
  } catch {
    return false;
  }
  const from = minutesOf(schedule.from);
  const to = minutesOf(schedule.to);
  const listed = (d: number) => schedule.days.includes(d);
  if (from === to) return listed(now.weekday);
  if (from < to) return listed(now.weekday) && from <= now.minute && now.minute < to;
  const previous = now.weekday === 1 ? 7 : now.weekday - 1;
  return (listed(now.weekday) && now.minute >= from) || (listed(previous) && now.minute < to);
}

/**
 * Why a candidate is not offered a lead: the verdicts the simulator and real routing give (the
 * one list; the API's enum and the dashboard's labels are records over it).
 */
export const REFUSALS = [
  'archived',
  'paused',
  'country',
  'quality',
  'hours',
  'cap_full',
  'already_offered',
  'not_tried',
  'not_reached',
] as const;
export type Refusal = (typeof REFUSALS)[number];

/**
 * Why a country is refused, or null. Both lists must accept it (empty = every country): a flow
 * target can narrow its partner's countries but never widen them.
 */
export function countryRefusal(country: string, targetCountries: string[], partnerCountries: string[]): string | null {
  if (partnerCountries.length && !partnerCountries.includes(country)) return `does not take ${country}`;
  if (targetCountries.length && !targetCountries.includes(country)) return `does not take ${country} in this flow`;
  return null;
}

export interface EligibilityInput {
  partner: {
    status: 'active' | 'paused';
    archived_at: string | null;
    countries: string[];
    working_hours: Schedule | null;
    quality: QualityCheck;
  };
  /** null when the lead is offered to one partner directly (no flow target). */
  target: { countries: string[]; schedule: Schedule | null } | null;
}

/** What eligibility looks at in a lead: its country, its fraud flags (mask) and quality score. */
export interface LeadTraits extends LeadQuality {
  country: string;
}

/** Why this candidate cannot take the lead now (caps aside), or null. */
export function refusal(
  c: EligibilityInput,
  lead: LeadTraits,
  ms: number,
): { verdict: Refusal; reason: string } | null {
  if (c.partner.archived_at) return { verdict: 'archived', reason: 'deleted' };
  if (c.partner.status !== 'active') return { verdict: 'paused', reason: 'paused' };
  const byCountry = countryRefusal(lead.country, c.target?.countries ?? [], c.partner.countries);
  if (byCountry) return { verdict: 'country', reason: byCountry };
  const byQuality = qualityRefusal(c.partner.quality, lead);
  if (byQuality) return { verdict: 'quality', reason: byQuality };
  // A target's schedule replaces the partner's working hours for this flow.
  if (!isOpen(c.target?.schedule ?? c.partner.working_hours, ms))
    return { verdict: 'hours', reason: 'outside working hours' };
  return null;
}
