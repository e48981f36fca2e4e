// Date bounds for lead searches: a calendar date is a whole day in an IANA time zone, a
// date-time is an instant. Bounds come out as ISO 8601 UTC text ("…T…:…:….sssZ"), the form the
// leads table stores, so they compare as text on both engines and range-scan the date indexes.
import { canonicalTimeZone, startOfLocalDay } from '../../time.js';

export const isTimeZone = (tz: string) => canonicalTimeZone(tz) !== null;

/**
 * The first instant of a calendar day in a zone. Usually local midnight; where a DST change
 * skips midnight, the day starts at the first local time that exists.
 */
export const startOfDay = (year: number, month: number, day: number, tz: string): number =>
  startOfLocalDay(tz, year * 10_000 + month * 100 + day);

function utcMs(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number {
  // Date.UTC maps years 0–99 to 1900–1999; setUTCFullYear does not.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?([Zz]|[+-]\d{2}:\d{2})$/;

export type Bound = { kind: 'date'; year: number; month: number; day: number } | { kind: 'instant'; ms: number };

/** "YYYY-MM-DD" or an ISO 8601 date-time with Z or ±HH:MM; null when it is neither (or no such day). */
export function parseBound(text: string): Bound | null {
  const d = DATE.exec(text);
  if (d) {
    const [year, month, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    const back = new Date(utcMs(year, month, day));
    if (back.getUTCFullYear() !== year || back.getUTCMonth() + 1 !== month || back.getUTCDate() !== day) return null;
    return { kind: 'date', year, month, day };
  }
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  const wall = utcMs(year, month, day, hour, minute, second);
  const back = new Date(wall);
  if (back.getUTCDate() !== day) return null; // 2026-02-30T…
  const ms = Math.trunc(Number(`0${m[7] ?? ''}`) * 1000);
  const zone = m[8].toUpperCase();
  const offset =
    zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  return { kind: 'instant', ms: wall + ms - offset };
}

const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');
const MIN_MS = Date.parse('0000-01-01T00:00:00.000Z');

/** ISO text of an instant, clamped to the years ISO text sorts correctly in (0000–9999). */
export const isoText = (ms: number) => new Date(Math.min(MAX_MS, Math.max(MIN_MS, ms))).toISOString();

/** Inclusive lower bound: the start of the day, or the instant itself. */
export function lowerBound(b: Bound, tz: string): number {
  return b.kind === 'instant' ? b.ms : startOfDay(b.year, b.month, b.day, tz);
}

/** Exclusive upper bound: the start of the next day (the day is included), or the instant. */
export function upperBound(b: Bound, tz: string): number {
  if (b.kind === 'instant') return b.ms;
  const next = new Date(utcMs(b.year, b.month, b.day) + 86_400_000);
  return startOfDay(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), tz);
}
