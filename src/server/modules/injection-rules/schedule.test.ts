import assert from 'node:assert/strict';
import { test } from 'node:test';
import { latestOccurrence, nextOccurrence, WEEKDAYS, type Schedule } from './schedule.js';

// A rule's occurrences in its zone, DST included.

const every = (at: string, time_zone = 'Europe/Berlin'): Schedule => ({ time_zone, at, days: [...WEEKDAYS] });
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (text: string) => Date.parse(text);

test('10:00 Europe/Berlin is 09:00Z in winter and 08:00Z in summer', () => {
  const s = every('10:00');
  assert.equal(iso(latestOccurrence(s, at('2026-01-15T12:00:00Z'))), '2026-01-15T09:00:00.000Z');
  assert.equal(iso(latestOccurrence(s, at('2026-07-15T12:00:00Z'))), '2026-07-15T08:00:00.000Z');
  // Before today's run: yesterday's.
  assert.equal(iso(latestOccurrence(s, at('2026-07-15T07:59:59Z'))), '2026-07-14T08:00:00.000Z');
  assert.equal(iso(nextOccurrence(s, at('2026-07-15T07:59:59Z'))), '2026-07-15T08:00:00.000Z');
  assert.equal(iso(nextOccurrence(s, at('2026-07-15T08:00:00Z'))), '2026-07-16T08:00:00.000Z');
  // Across the change: Saturday 28 March in winter time, Sunday 29 March in summer time.
  assert.equal(iso(nextOccurrence(s, at('2026-03-28T09:00:00Z'))), '2026-03-29T08:00:00.000Z');
  assert.equal(iso(nextOccurrence(s, at('2026-10-24T08:00:00Z'))), '2026-10-25T09:00:00.000Z');
});

test('a time the clocks skip runs at the next valid minute; a time shown twice runs at its first', () => {
  // Berlin, 29 March 2026: 02:00 CET becomes 03:00 CEST (01:00Z); 02:30 does not exist.
  const skipped = every('02:30');
  assert.equal(iso(latestOccurrence(skipped, at('2026-03-29T05:00:00Z'))), '2026-03-29T01:00:00.000Z');
  assert.equal(iso(latestOccurrence(skipped, at('2026-03-30T05:00:00Z'))), '2026-03-30T00:30:00.000Z');
  // 25 October 2026: 03:00 CEST becomes 02:00 CET; 02:30 is shown at 00:30Z and at 01:30Z.
  const twice = every('02:30');
  assert.equal(iso(latestOccurrence(twice, at('2026-10-25T01:45:00Z'))), '2026-10-25T00:30:00.000Z');
  assert.equal(iso(nextOccurrence(twice, at('2026-10-25T00:30:00Z'))), '2026-10-26T01:30:00.000Z');
  // America/New_York, 8 March 2026: 02:00 EST becomes 03:00 EDT (07:00Z).
  assert.equal(
    iso(latestOccurrence(every('02:15', 'America/New_York'), at('2026-03-08T12:00:00Z'))),
    '2026-03-08T07:00:00.000Z',
  );
});

test('weekdays: only the days named', () => {
  const s: Schedule = { time_zone: 'UTC', at: '06:00', days: ['mon', 'fri'] };
  // Wednesday 4 March 2026: the last was Monday the 2nd, the next is Friday the 6th.
  assert.equal(iso(latestOccurrence(s, at('2026-03-04T12:00:00Z'))), '2026-03-02T06:00:00.000Z');
  assert.equal(iso(nextOccurrence(s, at('2026-03-04T12:00:00Z'))), '2026-03-06T06:00:00.000Z');
});
