// The date range of a report: days in the caller's time zone or exact instants, turned into a
// half-open UTC interval [from, to).
import { invalid, type FieldError } from '../../http/errors.js';
import { addDays, canonicalTimeZone, dayNumberOfUtc, localDay, startOfLocalDay, type DayNumber } from '../../time.js';

export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;

export const DATE_INPUT_PATTERN =
  '^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:\\d{2}))?$';
const DATE_INPUT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):(\d{2})))?$/;

type Parsed = { kind: 'day'; day: DayNumber } | { kind: 'instant'; ms: number };

function parseInput(value: string): Parsed | null {
  const m = DATE_INPUT.exec(value);
  if (!m) return null;
  const [, y, mo, d, hh, mi, ss, , oh, om] = m;
  const year = Number(y);
  // Leads are stamped with four-digit years from the epoch on; nothing outside can match.
  if (year < 1970 || year > 2999) return null;
  const day = year * 10_000 + Number(mo) * 100 + Number(d);
  const check = new Date(0);
  check.setUTCFullYear(year, Number(mo) - 1, Number(d));
  if (dayNumberOfUtc(check.getTime()) !== day) return null; // 2026-02-30, month 13, …
  if (hh === undefined) return { kind: 'day', day };
  if (Number(hh) > 23 || Number(mi) > 59 || (ss !== undefined && Number(ss) > 59)) return null;
  if (oh !== undefined && (Number(oh) > 18 || Number(om) > 59)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : { kind: 'instant', ms };
}

export interface RangeInput {
  date_from?: string;
  date_to?: string;
  timezone?: string;
}

export interface Range {
  fromMs: number;
  toMs: number;
  tz: string;
}

/**
 * date_from: a day (from its first instant in the time zone) or an instant, inclusive.
 * date_to: a day (through its last instant) or an instant, exclusive.
 * Defaults: date_to today, date_from 29 days before date_to's day (30 days in all).
 */
export function resolveRange(input: RangeInput, fallbackTz: string, nowMs = Date.now()): Range {
  const errors: FieldError[] = [];
  let tz = canonicalTimeZone(input.timezone ?? fallbackTz);
  if (tz === null) {
    if (input.timezone !== undefined)
      errors.push({ field: 'timezone', message: `"${input.timezone}" is not an IANA time zone (e.g. Europe/Berlin)` });
    tz = 'UTC'; // an operator row with a bad zone must not break every report
  }
  const from = input.date_from === undefined ? undefined : parseInput(input.date_from);
  const to = input.date_to === undefined ? undefined : parseInput(input.date_to);
  const shape = 'must be a day (YYYY-MM-DD) or an ISO 8601 date-time with Z or an offset, from 1970 to 2999';
  if (from === null) errors.push({ field: 'date_from', message: shape });
  if (to === null) errors.push({ field: 'date_to', message: shape });
  if (errors.length) invalid(errors);

  const toMs =
    to === undefined
      ? startOfLocalDay(tz, addDays(localDay(tz, nowMs), 1))
      : to!.kind === 'day'
        ? startOfLocalDay(tz, addDays(to!.day, 1))
        : to!.ms;
  const fromMs =
    from === undefined
      ? startOfLocalDay(tz, addDays(localDay(tz, toMs - 1), -(30 - 1)))
      : from!.kind === 'day'
        ? startOfLocalDay(tz, from!.day)
        : from!.ms;
  if (fromMs >= toMs) invalid([{ field: 'date_to', message: 'must be after date_from' }]);
  // A DST change can add an hour to a span of whole days.
  if (toMs - fromMs > MAX_RANGE_DAYS * DAY_MS + 2 * 3_600_000) {
    invalid([{ field: 'date_to', message: `must be at most ${MAX_RANGE_DAYS} days after date_from` }]);
  }
  return { fromMs, toMs, tz };
}
