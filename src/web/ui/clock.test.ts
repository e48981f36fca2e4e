// The dashboard's one clock: dates in the operator's zone whatever the browser's, and no screen
// formatting a date on its own (the browser's zone would come back with it).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { clockIn, dayIn, instantIn } from './clock';

const LATE = '2026-11-25T23:52:10Z'; // the 25th in UTC and New York, the 26th in Berlin

test('a clock shows an instant in its zone, not the process zone', () => {
  for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York']) {
    const expected = new Intl.DateTimeFormat(undefined, { timeZone: zone, dateStyle: 'medium', timeStyle: 'medium' });
    assert.equal(clockIn(zone).zone, zone);
    assert.equal(clockIn(zone).dateTime(LATE), expected.format(new Date(LATE)));
  }
  assert.match(clockIn('Europe/Berlin').dateTime(LATE), /26/);
  assert.match(clockIn('UTC').dateTime(LATE), /25/);
  assert.match(clockIn('UTC').time(Date.parse(LATE)), /23:52:10|11:52:10/);
  assert.equal(clockIn('UTC').dateTime(null), '—');
  assert.equal(clockIn('UTC').date(undefined), '—');
});

test('a zone the browser does not know shows UTC, never the browser zone', () => {
  assert.equal(clockIn('Mars/Olympus').dateTime(LATE), clockIn('UTC').dateTime(LATE));
});

test('the day of an instant in a zone', () => {
  assert.equal(dayIn('UTC', new Date(LATE)), '2026-11-25');
  assert.equal(dayIn('Europe/Berlin', new Date(LATE)), '2026-11-26');
  assert.equal(dayIn('America/New_York', new Date(LATE)), '2026-11-25');
});

test('a wall-clock time in a zone is the instant it names there, across DST', () => {
  assert.equal(instantIn('UTC', '2026-11-25T23:59:59'), '2026-11-25T23:59:59.000Z');
  assert.equal(instantIn('Europe/Berlin', '2026-11-25T23:59:59'), '2026-11-25T22:59:59.000Z');
  assert.equal(instantIn('Europe/Berlin', '2026-07-01'), '2026-06-30T22:00:00.000Z');
  assert.equal(instantIn('America/New_York', '2026-11-25T19:30'), '2026-11-26T00:30:00.000Z');
  // The night clocks go back in New York (1 November 2026): 08:00 is after the change.
  assert.equal(instantIn('America/New_York', '2026-11-01T08:00'), '2026-11-01T13:00:00.000Z');
  assert.equal(instantIn('America/New_York', '2026-10-31T08:00'), '2026-10-31T12:00:00.000Z');
  // 02:30 does not exist in Berlin on 29 March 2026 (02:00 → 03:00): read with the offset before.
  assert.equal(instantIn('Europe/Berlin', '2026-03-29T02:30'), '2026-03-29T01:30:00.000Z');
});

// ---- the guard: src/web formats dates only through the clock ----

const WEB = join(import.meta.dirname, '..');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts') ? [path] : [];
  });

/** Browser-zone date formatting in a source text: what the clock exists to replace. */
function browserZoneFormatting(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    const rules: [RegExp, string][] = [
      [/\.toLocale(Date|Time)String\(/, 'toLocaleDateString/toLocaleTimeString'],
      [/Date\([^;]*?\)\.toLocaleString\(/, 'Date#toLocaleString'],
      [/\b(?:date|time|when|at|\w+_at|\w+At)\.toLocaleString\(/, 'Date#toLocaleString'],
      [/Intl\.DateTimeFormat\(/, 'Intl.DateTimeFormat'],
    ];
    for (const [re, what] of rules) if (re.test(line)) found.push(`${i + 1}: ${what}: ${line.trim()}`);
  });
  return found;
}

test('the guard sees browser-zone formatting and leaves numbers alone', () => {
  assert.equal(browserZoneFormatting('x = new Date(iso).toLocaleString();').length, 1);
  assert.equal(browserZoneFormatting('x = new Date(iso).toLocaleDateString(undefined, {});').length, 1);
  assert.equal(browserZoneFormatting('`Updated ${new Date(u).toLocaleTimeString()}`').length, 1);
  assert.equal(browserZoneFormatting('<Td>{lead.created_at.toLocaleString()}</Td>').length, 1);
  assert.equal(
    browserZoneFormatting("const f = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });").length,
    1,
  );
  assert.equal(browserZoneFormatting('const n = total.count.toLocaleString();').length, 0);
  assert.equal(browserZoneFormatting('new Intl.NumberFormat(undefined, {})').length, 0);
});

test('no screen formats a date but through src/web/ui/clock.ts', () => {
  const offenders = sources(WEB)
    .filter((f) => !f.endsWith(join('ui', 'clock.ts')))
    .flatMap((f) => browserZoneFormatting(readFileSync(f, 'utf8')).map((hit) => `${f.slice(WEB.length + 1)}:${hit}`));
  assert.deepEqual(offenders, [], 'format dates with useClock() (src/web/ui/useClock.ts), in the operator zone');
});
