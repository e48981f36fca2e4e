// time.ts keeps each zone's last wall-clock answer (by the second): the answers must be what the
// zone's formatter says for every instant, across DST changes, whichever zones are asked in turn.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dayKey, localDay, localHourKey } from './time.js';

/** The zone's wall clock at `ms` straight from Intl, as "YYYY-MM-DDTHH". */
function reference(tz: string, ms: number): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
    })
      .formatToParts(new Date(ms))
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}`;
}

test('the wall clock is exact second by second across DST changes, zones asked in turn', () => {
  // Berlin springs forward at 01:00 UTC; Lord Howe moves by 30 minutes at 15:00 UTC (02:00 local);
  // St John's is 3.5 hours behind.
  const changes: [string, string][] = [
    ['Europe/Berlin', '2026-03-29T01:00:00Z'],
    ['Australia/Lord_Howe', '2026-04-04T15:00:00Z'],
    ['America/St_Johns', '2026-11-01T04:30:00Z'],
  ];
  let checked = 0;
  for (let s = -90; s <= 90; s++) {
    for (const [tz, at] of changes) {
      for (const ms of [0, 999, 1, 500]) {
        const t = Date.parse(at) + s * 1000 + ms;
        assert.equal(localHourKey(tz, t), reference(tz, t), `${tz} at ${new Date(t).toISOString()}`);
        checked++;
      }
    }
  }
  assert.equal(checked, 181 * 3 * 4);
  // Before 1970 (negative instants) the second is floored, not truncated toward zero.
  const before = Date.parse('1969-12-31T23:59:59.500Z');
  assert.equal(localHourKey('UTC', before), '1969-12-31T23');
  assert.equal(localHourKey('UTC', before + 600), '1970-01-01T00');
  assert.deepEqual(
    [dayKey(localDay('UTC', before)), dayKey(localDay('UTC', before + 600))],
    ['1969-12-31', '1970-01-01'],
  );
});
