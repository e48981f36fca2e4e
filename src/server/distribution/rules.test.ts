// The pure parts of routing, without a database: working hours (midnight spans, all-day, DST),
// country narrowing, a partner's quality rule, the try order (priority first; weighted random
// within a priority) and which cap slots a lead takes on which local day.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { capSlots } from './caps.js';
import { countryRefusal, isOpen, localWeekMinute, refusal, type Schedule } from './eligibility.js';
import { qualityCheckOf, storedQualityRule } from './quality-rule.js';
import { maskOf, type Flag } from '../db/lead-flags.js';
import { tryOrder } from './order.js';

const at = (iso: string) => Date.parse(iso);
// 2026-11-23 is a Monday; Berlin is UTC+1 in November, Tokyo UTC+9 all year.
const BERLIN_WEEKDAYS: Schedule = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' };

test('local weekday and minute of an instant in a zone', () => {
  assert.deepEqual(localWeekMinute('Europe/Berlin', at('2026-11-23T08:30:00Z')), { weekday: 1, minute: 9 * 60 + 30 });
  assert.deepEqual(localWeekMinute('Asia/Tokyo', at('2026-11-22T15:00:00Z')), { weekday: 1, minute: 0 }); // Sunday in UTC
  assert.deepEqual(localWeekMinute('America/New_York', at('2026-11-23T03:59:00Z')), {
    weekday: 7,
    minute: 22 * 60 + 59,
  });
});

test('from < to: open from `from` (inclusive) to `to` (exclusive) on the listed days only', () => {
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-11-23T07:59:00Z')), false); // Mon 08:59
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-11-23T08:00:00Z')), true); // Mon 09:00
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-11-23T16:59:00Z')), true); // Mon 17:59
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-11-23T17:00:00Z')), false); // Mon 18:00
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-11-28T10:00:00Z')), false); // Sat 11:00
  // In summer Berlin is UTC+2: 09:00 local on the Monday after the DST change is 07:00Z.
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-03-30T06:59:00Z')), false);
  assert.equal(isOpen(BERLIN_WEEKDAYS, at('2026-03-30T07:00:00Z')), true);
});

test('to < from spans midnight: the hours after midnight belong to the previous listed day', () => {
  const fridayNight: Schedule = { timezone: 'Asia/Tokyo', days: [5], from: '22:00', to: '02:00' };
  assert.equal(isOpen(fridayNight, at('2026-11-27T12:59:00Z')), false); // Fri 21:59
  assert.equal(isOpen(fridayNight, at('2026-11-27T13:00:00Z')), true); // Fri 22:00
  assert.equal(isOpen(fridayNight, at('2026-11-27T16:30:00Z')), true); // Sat 01:30, Saturday not listed
  assert.equal(isOpen(fridayNight, at('2026-11-27T17:00:00Z')), false); // Sat 02:00
  assert.equal(isOpen(fridayNight, at('2026-11-26T16:30:00Z')), false); // Fri 01:30: Thursday is not listed
  // Sunday night runs into Monday: the week wraps.
  const sundayNight: Schedule = { timezone: 'UTC', days: [7], from: '20:00', to: '06:00' };
  assert.equal(isOpen(sundayNight, at('2026-11-23T05:59:00Z')), true); // Mon 05:59
  assert.equal(isOpen(sundayNight, at('2026-11-23T20:00:00Z')), false); // Mon 20:00
});

test('from == to: open all day on the listed days; null: always open', () => {
  const wednesdays: Schedule = { timezone: 'UTC', days: [3], from: '00:00', to: '00:00' };
  assert.equal(isOpen(wednesdays, at('2026-11-25T00:00:00Z')), true);
  assert.equal(isOpen(wednesdays, at('2026-11-25T23:59:59Z')), true);
  assert.equal(isOpen(wednesdays, at('2026-11-26T00:00:00Z')), false);
  assert.equal(isOpen({ ...wednesdays, from: '12:34', to: '12:34' }, at('2026-11-25T03:00:00Z')), true);
  assert.equal(isOpen(null, at('2026-11-28T03:00:00Z')), true);
});

test('countries: both the partner and the flow target must take the country', () => {
  assert.equal(countryRefusal('DE', [], []), null);
  assert.equal(countryRefusal('DE', ['DE'], ['DE', 'AT']), null);
  assert.equal(countryRefusal('AT', ['DE'], ['DE', 'AT']), 'does not take AT in this flow'); // narrowed
  assert.equal(countryRefusal('FR', ['FR'], ['DE']), 'does not take FR'); // a target cannot widen
  assert.equal(countryRefusal('FR', [], ['DE']), 'does not take FR');
});

test('refusal: deleted, paused, country, hours (a target schedule replaces the partner hours)', () => {
  const partner = {
    status: 'active' as const,
    archived_at: null,
    countries: [],
    working_hours: BERLIN_WEEKDAYS,
    quality: qualityCheckOf('{"refuse_flags":[],"min_score":null}'),
  };
  const DE = { country: 'DE', flags: 0, score: 100 };
  const saturday = at('2026-11-28T10:00:00Z');
  assert.deepEqual(refusal({ partner, target: null }, DE, saturday), {
    verdict: 'hours',
    reason: 'outside working hours',
  });
  assert.deepEqual(
    refusal({ partner, target: { countries: [], schedule: { ...BERLIN_WEEKDAYS, days: [6] } } }, DE, saturday),
    null,
  );
  assert.deepEqual(refusal({ partner: { ...partner, status: 'paused' }, target: null }, DE, saturday), {
    verdict: 'paused',
    reason: 'paused',
  });
  assert.deepEqual(
    refusal({ partner: { ...partner, archived_at: '2026-01-01T00:00:00.000Z' }, target: null }, DE, saturday),
    { verdict: 'archived', reason: 'deleted' },
  );
  assert.deepEqual(
    refusal({ partner: { ...partner, working_hours: null, countries: ['FR'] }, target: null }, DE, saturday),
    { verdict: 'country', reason: 'does not take DE' },
  );
});

test('refusal: a quality rule refuses the flags it names and scores below its minimum; an unscored lead passes the minimum', () => {
  const noon = at('2026-11-25T12:00:00Z');
  const partner = (rule: Parameters<typeof storedQualityRule>[0]) => ({
    status: 'active' as const,
    archived_at: null,
    countries: [],
    working_hours: null,
    quality: qualityCheckOf(storedQualityRule(rule)),
  });
  const lead = (flags: Flag[], score: number | null) => ({ country: 'DE', flags: maskOf(flags), score });
  const refusing = partner({ refuse_flags: ['ip_country', 'phone_country'] });
  assert.deepEqual(refusal({ partner: refusing, target: null }, lead(['ip_country', 'phone_type'], 55), noon), {
    verdict: 'quality',
    reason: 'refuses flagged leads (ip_country)',
  });
  assert.equal(
    refusal({ partner: refusing, target: null }, lead(['phone_country', 'ip_country'], 45), noon)?.reason,
    'refuses flagged leads (phone_country, ip_country)',
  );
  assert.equal(refusal({ partner: refusing, target: null }, lead(['disposable_email'], 60), noon), null);
  const picky = partner({ min_score: 60 });
  assert.deepEqual(refusal({ partner: picky, target: null }, lead(['ip_country', 'velocity_ip'], 45), noon), {
    verdict: 'quality',
    reason: 'takes quality 60 or more (this lead: 45)',
  });
  assert.equal(refusal({ partner: picky, target: null }, lead([], 60), noon), null, 'the minimum itself is taken');
  assert.equal(refusal({ partner: picky, target: null }, lead(['ip_country'], null), noon), null, 'not scored');
  // The country is refused first: its reason is the one given.
  assert.equal(
    refusal({ partner: { ...picky, countries: ['FR'] }, target: null }, lead([], 10), noon)?.verdict,
    'country',
  );
  assert.equal(
    storedQualityRule({ refuse_flags: ['ip_country', 'phone_country'] }),
    '{"refuse_flags":["phone_country","ip_country"],"min_score":null}',
  );
});

/** A small seeded generator (mulberry32), so the statistical checks are reproducible. */
function seeded(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('try order: every lower priority first, whatever the weights', () => {
  const items = [
    { id: 'c', priority: 3, weight: 10_000 },
    { id: 'a', priority: 1, weight: 1 },
    { id: 'b1', priority: 2, weight: 1 },
    { id: 'b2', priority: 2, weight: 5 },
  ];
  const random = seeded(1);
  for (let i = 0; i < 200; i++) {
    const ids = tryOrder(items, random).map((x) => x.id);
    assert.equal(ids[0], 'a');
    assert.deepEqual(ids.slice(1, 3).sort(), ['b1', 'b2']);
    assert.equal(ids[3], 'c');
  }
});

test('try order within a priority: first picks proportional to weight, second picks too', () => {
  const items = [
    { id: 'w1', priority: 1, weight: 1 },
    { id: 'w2', priority: 1, weight: 2 },
    { id: 'w7', priority: 1, weight: 7 },
  ];
  const n = 20_000;
  const first: Record<string, number> = { w1: 0, w2: 0, w7: 0 };
  let w2AfterW7 = 0;
  let w7First = 0;
  const random = seeded(42);
  for (let i = 0; i < n; i++) {
    const ids = tryOrder(items, random).map((x) => x.id);
    first[ids[0]]++;
    if (ids[0] === 'w7') {
      w7First++;
      if (ids[1] === 'w2') w2AfterW7++;
    }
  }
  // Within 5 standard deviations of the binomial expectation: fails only if the order is wrong.
  const within = (count: number, trials: number, p: number) =>
    Math.abs(count - trials * p) <= 5 * Math.sqrt(trials * p * (1 - p));
  assert.ok(within(first.w1, n, 0.1), `w1 first ${first.w1}`);
  assert.ok(within(first.w2, n, 0.2), `w2 first ${first.w2}`);
  assert.ok(within(first.w7, n, 0.7), `w7 first ${first.w7}`);
  // Among the rest, the next pick is again by weight: w2 before w1 two times in three.
  assert.ok(within(w2AfterW7, w7First, 2 / 3), `w2 second ${w2AfterW7} of ${w7First}`);
});

test('cap slots: only set caps, in a fixed order, on the partner’s local day and hour', () => {
  const ms = at('2026-11-22T12:30:00Z');
  const partner = {
    id: 'p',
    daily_cap: 10,
    hourly_cap: 2,
    total_cap: 100,
    working_hours: { ...BERLIN_WEEKDAYS, timezone: 'Pacific/Kiritimati' },
  };
  const target = {
    id: 't',
    flow_id: 'f',
    daily_cap: 3,
    hourly_cap: null,
    total_cap: 50,
    country_caps: { DE: 5, AT: 2 },
    cap_counts: 'deliveries' as const,
  };
  const slots = capSlots({ partner, target }, ms, 'DE');
  assert.deepEqual(
    slots.map((s) => [s.scope, s.period, s.cap, s.kind, s.full]),
    [
      ['partner:p', '2026-11-23', 10, 'daily', 'daily cap full'], // UTC+14: already Monday
      ['partner:p', '2026-11-23T02', 2, 'hourly', 'hourly cap full'],
      ['partner:p', 'total', 100, 'total', 'total cap full'],
      ['target:t', '2026-11-23', 3, 'flow_daily', 'daily cap in this flow full'],
      ['target:t', 'total', 50, 'flow_total', 'total cap in this flow full'],
      ['target:t:DE', '2026-11-23', 5, 'flow_country_daily', 'daily cap for DE in this flow full'],
    ],
  );
  // Another country takes its own country slot; a country with no cap of its own takes none.
  assert.deepEqual(capSlots({ partner, target }, ms, 'AT').at(-1)!.scope, 'target:t:AT');
  assert.equal(capSlots({ partner, target }, ms, 'FR').length, 5);
  // FTD-counted target caps live in their own counters, never the delivery ones.
  const ftds = capSlots({ partner, target: { ...target, cap_counts: 'ftds' } }, ms, 'DE').filter(
    (s) => s.counts === 'ftds',
  );
  assert.deepEqual(
    ftds.map((s) => [s.scope, s.full]),
    [
      ['target:t:ftds', 'daily FTD cap in this flow full'],
      ['target:t:ftds', 'total FTD cap in this flow full'],
      ['target:t:ftds:DE', 'daily FTD cap for DE in this flow full'],
    ],
  );
  assert.deepEqual(
    capSlots({ partner: { ...partner, working_hours: null }, target: null }, ms, 'DE').map((s) => s.period),
    ['2026-11-22', '2026-11-22T12', 'total'],
  );
  const none = { ...target, daily_cap: null, total_cap: null, country_caps: {} };
  assert.deepEqual(
    capSlots({ partner: { ...partner, daily_cap: null, hourly_cap: null, total_cap: null }, target: none }, ms, 'DE'),
    [],
  );
});
