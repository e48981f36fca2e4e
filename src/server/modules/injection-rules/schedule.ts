import { addDays, instantOfLocalTime, isoWeekday, localDay } from '../../time.js';

// When a rule runs: "at HH:MM on these weekdays, local time in a zone". Pure date arithmetic;
// runner.ts decides what to do with an occurrence.

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

export interface Schedule {
  time_zone: string;
  at: string; // HH:MM
  days: Weekday[];
}

/** A missed occurrence still runs when it is less than this late (after downtime); older ones are skipped. */
export const MAX_LATE_MS = 6 * 3_600_000;

function occurrenceOn(s: Schedule, day: number): number | null {
  if (!s.days.includes(WEEKDAYS[isoWeekday(day) - 1])) return null;
  const [h, m] = s.at.split(':').map(Number);
  return instantOfLocalTime(s.time_zone, day, h * 60 + m);
}

/** The latest occurrence at or before `now` (within the last eight local days), or null. */
export function latestOccurrence(s: Schedule, now: number): number | null {
  const today = localDay(s.time_zone, now);
  for (let i = 0; i <= 8; i++) {
    const t = occurrenceOn(s, addDays(today, -i));
    if (t !== null && t <= now) return t;
  }
  return null;
}

/** The first occurrence after `now`, or null. */
export function nextOccurrence(s: Schedule, now: number): number | null {
  const today = localDay(s.time_zone, now);
  for (let i = -1; i <= 8; i++) {
    const t = occurrenceOn(s, addDays(today, i));
    if (t !== null && t > now) return t;
  }
  return null;
}
