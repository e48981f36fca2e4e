// The dashboard's one clock: every date and time it shows is in one zone, the operator's
// profile zone (the one the API's date filters, the Overview's "Today" and Analytics default
// to), never the browser's. Screens get it through useClock() (useClock.ts); nothing else in
// src/web formats a date (src/web/ui/clock.test.ts checks).

/** An instant as the API sends it (ISO 8601) or as milliseconds; null when there is none. */
export type Instant = string | number | null | undefined;

export interface Clock {
  /** The IANA zone every date below is shown in. */
  zone: string;
  /** An instant as date and time, "—" when there is none. */
  dateTime: (at: Instant) => string;
  /** An instant's calendar date. */
  date: (at: Instant) => string;
  /** An instant's time of day. */
  time: (at: Instant) => string;
}

const NONE = '—';

function formatter(timeZone: string, options: Intl.DateTimeFormatOptions) {
  try {
    return new Intl.DateTimeFormat(undefined, { ...options, timeZone });
  } catch {
    // A zone this browser does not know: UTC, never the browser's own zone.
    return new Intl.DateTimeFormat(undefined, { ...options, timeZone: 'UTC' });
  }
}

const show = (f: Intl.DateTimeFormat) => (at: Instant) => (at || at === 0 ? f.format(new Date(at)) : NONE);

/** The clock of a zone. */
export function clockIn(zone: string): Clock {
  return {
    zone,
    dateTime: show(formatter(zone, { dateStyle: 'medium', timeStyle: 'medium' })),
    date: show(formatter(zone, { dateStyle: 'medium' })),
    time: show(formatter(zone, { timeStyle: 'medium' })),
  };
}

/** The date (YYYY-MM-DD) of an instant (default: now) in a time zone (en-CA writes dates as ISO does). */
export const dayIn = (timeZone: string, now = new Date()) => new Intl.DateTimeFormat('en-CA', { timeZone }).format(now);

/**
 * The instant a wall-clock time in a zone names: "YYYY-MM-DD" or "YYYY-MM-DDTHH:mm[:ss]", as date
 * and datetime-local inputs give them. A time a DST change skips is read with the offset before it.
 */
export function instantIn(zone: string, local: string): string {
  const [date, time = '00:00'] = local.split('T');
  const [y, m, d] = date.split('-').map(Number);
  const [h, min, s = 0] = time.split(':').map(Number);
  const wall = Date.UTC(y, m - 1, d, h, min, s);
  // The zone's offset at a first guess, then at the answer, in case a DST change lies between.
  const guess = wall - offsetAt(zone, wall);
  return new Date(wall - offsetAt(zone, guess)).toISOString();
}

/** How far a zone's wall clock is ahead of UTC at an instant, in ms. */
function offsetAt(zone: string, ms: number): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  }).formatToParts(new Date(ms));
  const n = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - Math.floor(ms / 1000) * 1000;
}

/** The browser's own zone: only a default to offer for a new operator, never to show dates in. */
export const browserZone = () => new Intl.DateTimeFormat().resolvedOptions().timeZone;
