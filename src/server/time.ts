// Calendar arithmetic in an IANA time zone, without a date library: the instant each local day
// starts (DST-aware), and local day/ISO week/month keys. Shared by lead search (date bounds) and
// analytics (grouping). The database only ever sees UTC text.

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    // Any casing of a zone name is valid: keep the cache bounded whatever callers send.
    if (formatters.size >= 1000) formatters.clear();
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      era: 'short', // years before 1 AD come out as positive numbers with era BC
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The zone's canonical name ("europe/berlin" → "Europe/Berlin"), or null when it is not one. */
export function canonicalTimeZone(tz: string): string | null {
  // resolvedOptions() builds a whole options object (a tenth of a millisecond): once per name.
  let name = canonical.get(tz);
  if (name === undefined) {
    try {
      name = formatter(tz).resolvedOptions().timeZone;
    } catch {
      name = null;
    }
    if (canonical.size >= 1000) canonical.clear();
    canonical.set(tz, name);
  }
  return name;
}
const canonical = new Map<string, string | null>();

/**
 * The wall-clock time in `tz` at instant `ms`, as if it were UTC (whole seconds). It depends on
 * the second alone, so each zone's last answer is kept: intake asks for the same second lead
 * after lead (cap periods), and formatToParts costs about 25 µs.
 */
function wallClock(tz: string, ms: number): number {
  const second = Math.floor(ms / 1000);
  const last = lastWallClock.get(tz);
  if (last && last.second === second) return last.wall;
  const wall = wallClockOf(tz, second * 1000);
  if (lastWallClock.size >= 1000) lastWallClock.clear();
  lastWallClock.set(tz, { second, wall });
  return wall;
}
const lastWallClock = new Map<string, { second: number; wall: number }>();

function wallClockOf(tz: string, ms: number): number {
  const p: Record<string, number> = {};
  let bc = false;
  for (const part of formatter(tz).formatToParts(new Date(ms))) {
    if (part.type === 'era') bc = part.value === 'BC';
    else if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  const d = new Date(0);
  d.setUTCFullYear(bc ? 1 - p.year : p.year, p.month - 1, p.day);
  d.setUTCHours(p.hour, p.minute, p.second, 0);
  return d.getTime();
}

/** A calendar day as a number that sorts like the date: 20261121. */
export type DayNumber = number;

export const dayNumberOfUtc = (ms: number): DayNumber => {
  const d = new Date(ms);
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
};

/** The local calendar day of instant `ms` in `tz`. */
export const localDay = (tz: string, ms: number): DayNumber => dayNumberOfUtc(wallClock(tz, ms));

/** The local day and hour of instant `ms` in `tz`: "YYYY-MM-DDTHH" (an hourly cap's period). */
export const localHourKey = (tz: string, ms: number): string => new Date(wallClock(tz, ms)).toISOString().slice(0, 13);

/** Midnight UTC of the calendar day, for date arithmetic. */
export function utcOfDay(day: DayNumber): number {
  const d = new Date(0);
  d.setUTCFullYear(Math.floor(day / 10_000), (Math.floor(day / 100) % 100) - 1, day % 100);
  return d.getTime();
}

export const addDays = (day: DayNumber, n: number): DayNumber => dayNumberOfUtc(utcOfDay(day) + n * DAY_MS);

/**
 * The first instant of local day `day` in `tz`. Usually local midnight; where a DST change skips
 * midnight (e.g. America/Santiago) the day starts at the first wall-clock time that exists.
 */
export function startOfLocalDay(tz: string, day: DayNumber): number {
  const wall = utcOfDay(day);
  // Two fixed-point steps find midnight when it exists; the check below catches the rest.
  let t = wall - (wallClock(tz, wall) - wall);
  t = wall - (wallClock(tz, t) - t);
  if (localDay(tz, t) === day && localDay(tz, t - 1000) < day) return t;
  // Offsets stay within ±15 h: search that window to the second for the first instant of the day.
  let lo = Math.floor((wall - 15 * HOUR_MS) / 1000);
  let hi = Math.ceil((wall + 15 * HOUR_MS) / 1000);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (localDay(tz, mid * 1000) >= day) hi = mid;
    else lo = mid + 1;
  }
  return lo * 1000;
}

export const dayKey = (day: DayNumber): string =>
  `${String(Math.floor(day / 10_000)).padStart(4, '0')}-${String(Math.floor(day / 100) % 100).padStart(2, '0')}-${String(day % 100).padStart(2, '0')}`;

export const monthKey = (day: DayNumber): string => dayKey(day).slice(0, 7);

/** ISO 8601 week (weeks start on Monday; week 1 holds the year's first Thursday): "2026-W47". */
export function isoWeekKey(day: DayNumber): string {
  const t = utcOfDay(day);
  const weekday = (new Date(t).getUTCDay() + 6) % 7; // Monday = 0
  const thursday = new Date(t + (3 - weekday) * DAY_MS);
  const year = thursday.getUTCFullYear();
  const jan1 = new Date(0);
  jan1.setUTCFullYear(year, 0, 1);
  const week = 1 + Math.floor((thursday.getTime() - jan1.getTime()) / (7 * DAY_MS));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

/** The Monday and Sunday of the ISO week holding `day`. */
export function weekSpan(day: DayNumber): [DayNumber, DayNumber] {
  const weekday = (new Date(utcOfDay(day)).getUTCDay() + 6) % 7;
  const monday = addDays(day, -weekday);
  return [monday, addDays(monday, 6)];
}

/**
 * The local days touching [fromMs, toMs) and the instant each starts. Also the coarsest
 * bucket (an hour, a quarter hour or a minute) that never straddles a local midnight, so
 * rows counted per UTC bucket fold exactly into local days, DST changes included.
 */
export interface DayGrid {
  days: DayNumber[];
  /** starts[i] is where days[i] begins; days[i] ends where days[i + 1] begins. */
  starts: number[];
  bucketMs: number;
}

export function dayGrid(tz: string, fromMs: number, toMs: number): DayGrid {
  const days: DayNumber[] = [];
  const starts: number[] = [];
  for (let day = localDay(tz, fromMs); ; day = addDays(day, 1)) {
    const start = startOfLocalDay(tz, day);
    if (start >= toMs && days.length) break;
    days.push(day);
    starts.push(start);
  }
  starts.push(startOfLocalDay(tz, addDays(days[days.length - 1], 1)));
  return { days, starts, bucketMs: bucketFor(starts) };
}

/** The largest of an hour, a quarter and a minute that every start is a multiple of. */
function bucketFor(starts: number[]): number {
  for (const size of [HOUR_MS, 15 * 60_000]) if (starts.every((s) => s % size === 0)) return size;
  return 60_000;
}

/**
 * The grid's days merged into periods (weeks, months: a new one starts wherever `periodOf` names
 * another): days[i] is the first day of each period inside the grid, starts[i] where it begins.
 */
export function periodGrid(grid: DayGrid, periodOf: (day: DayNumber) => string): DayGrid {
  const days: DayNumber[] = [];
  const starts: number[] = [];
  let last: string | null = null;
  grid.days.forEach((day, i) => {
    const key = periodOf(day);
    if (key === last) return;
    last = key;
    days.push(day);
    starts.push(grid.starts[i]);
  });
  starts.push(grid.starts[grid.days.length]);
  return { days, starts, bucketMs: bucketFor(starts) };
}

/** Index into grid.days of the day holding instant `ms` (which lies inside the grid). */
export function dayIndex(grid: DayGrid, ms: number): number {
  let lo = 0;
  let hi = grid.days.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (grid.starts[mid] <= ms) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** ISO weekday of a calendar day: 1 = Monday … 7 = Sunday. */
export const isoWeekday = (day: DayNumber): number => ((new Date(utcOfDay(day)).getUTCDay() + 6) % 7) + 1;

/**
 * The instant local day `day` shows `minute` (minutes after midnight) in `tz`. A time shown twice
 * (clocks going back) is its first instant; a time skipped (clocks going forward) is the first
 * instant after the gap, the next valid minute.
 */
export function instantOfLocalTime(tz: string, day: DayNumber, minute: number): number {
  const wall = utcOfDay(day) + minute * 60_000;
  // The zone's offsets a day and a half either side: at most one change lies between them.
  const offsetAt = (ms: number) => wallClock(tz, ms) - ms;
  const before = offsetAt(wall - 36 * HOUR_MS);
  const after = offsetAt(wall + 36 * HOUR_MS);
  const shown = [wall - before, wall - after].filter((t) => wallClock(tz, t) === wall);
  if (shown.length) return Math.min(...shown);
  // In a gap (after > before): the change lies in (wall − after, wall − before]; find it to the second.
  let lo = Math.floor((wall - after) / 1000);
  let hi = Math.ceil((wall - before) / 1000);
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * 1000) === after) hi = mid;
    else lo = mid + 1;
  }
  return lo * 1000;
}
