// The pure parts of lead search, without a database: day boundaries in time zones (DST included),
// date parsing, phone normalisation, name prefix ranges and masking.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoText, lowerBound, parseBound, startOfDay, upperBound } from './dates.js';
import { maskEmail, maskInText, maskPhone } from '../../privacy/mask.js';
import { prefixEnd } from './search-plan.js';
import { normalisePhone, splitMulti, textMatch } from './search.js';

const day = (y: number, m: number, d: number, tz: string) => isoText(startOfDay(y, m, d, tz));

test('a day starts at local midnight in its zone, also on DST change days', () => {
  assert.equal(day(2026, 11, 21, 'Europe/Berlin'), '2026-11-20T23:00:00.000Z');
  assert.equal(day(2026, 7, 1, 'Europe/Berlin'), '2026-06-30T22:00:00.000Z');
  assert.equal(day(2026, 3, 29, 'Europe/Berlin'), '2026-03-28T23:00:00.000Z'); // the 23-hour day
  assert.equal(day(2026, 3, 30, 'Europe/Berlin'), '2026-03-29T22:00:00.000Z');
  assert.equal(day(2026, 10, 25, 'Europe/Berlin'), '2026-10-24T22:00:00.000Z'); // the 25-hour day
  assert.equal(day(2026, 10, 26, 'Europe/Berlin'), '2026-10-25T23:00:00.000Z');
  // São Paulo 2018-11-04: clocks went from 00:00 to 01:00, so the day began at 01:00 local.
  assert.equal(day(2018, 11, 4, 'America/Sao_Paulo'), '2018-11-04T03:00:00.000Z');
  assert.equal(day(2026, 1, 1, 'Asia/Kolkata'), '2025-12-31T18:30:00.000Z');
  assert.equal(day(2026, 1, 1, 'Pacific/Kiritimati'), '2025-12-31T10:00:00.000Z');
  assert.equal(day(2026, 1, 1, 'UTC'), '2026-01-01T00:00:00.000Z');
  // A whole day: the next day's start is the exclusive end.
  const b = parseBound('2026-03-29')!;
  assert.equal(upperBound(b, 'Europe/Berlin') - lowerBound(b, 'Europe/Berlin'), 23 * 3_600_000);
});

test('date_from/date_to: a date or a date-time with a zone, nothing else', () => {
  assert.deepEqual(parseBound('2026-02-28'), { kind: 'date', year: 2026, month: 2, day: 28 });
  assert.equal(parseBound('2026-02-29'), null);
  assert.equal(parseBound('2028-02-29')?.kind, 'date');
  assert.deepEqual(parseBound('2026-11-21T10:00:00+01:00'), {
    kind: 'instant',
    ms: Date.parse('2026-11-21T09:00:00Z'),
  });
  assert.deepEqual(parseBound('2026-11-21T10:00Z'), { kind: 'instant', ms: Date.parse('2026-11-21T10:00:00Z') });
  assert.deepEqual(parseBound('2026-11-21T10:00:00.123456Z'), {
    kind: 'instant',
    ms: Date.parse('2026-11-21T10:00:00.123Z'),
  });
  for (const bad of [
    '2026-11-21T10:00:00',
    '2026-11-21 10:00:00Z',
    '2026-13-01',
    '2026-02-30T00:00:00Z',
    '2026-11-21T24:00:00Z',
    '21.11.2026',
    'today',
    '',
  ]) {
    assert.equal(parseBound(bad), null, bad);
  }
  // Bounds stay in the years ISO text sorts correctly in.
  assert.equal(isoText(upperBound(parseBound('9999-12-31')!, 'America/Los_Angeles')), '9999-12-31T23:59:59.999Z');
});

test('phone numbers in common notations become E.164; other text does not', () => {
  assert.equal(normalisePhone('+49 151 2345-6767'), '+4915123456767');
  assert.equal(normalisePhone('0049 (151) 23456767'), '+4915123456767');
  assert.equal(normalisePhone('4915123456767'), '+4915123456767');
  assert.equal(normalisePhone('12345'), null);
  assert.equal(normalisePhone('+49 151 abc'), null);
  assert.equal(normalisePhone('+0151234567'), null);
});

test('q: a UUID is looked up alone; contacts only with leads:contacts; names keep their case for the engine to fold', () => {
  const id = '0190a6b2-7c3d-7e4f-8a1b-2c3d4e5f6a7b';
  assert.deepEqual(textMatch(id.toUpperCase(), true), { id, email: null, phone: null, name: null });
  assert.deepEqual(textMatch(' Ann@Example.com ', true), {
    id: 'Ann@Example.com',
    email: 'ann@example.com',
    phone: null,
    name: null,
  });
  assert.deepEqual(textMatch('Ann@Example.com', false).email, null);
  assert.equal(textMatch('+49 151 23456767', true).phone, '+4915123456767');
  assert.equal(textMatch('+49 151 23456767', false).phone, null);
  assert.deepEqual(textMatch('Ada  Love lace', false).name, {
    whole: 'Ada Love lace',
    first: 'Ada',
    last: 'Love lace',
  });
  assert.equal(textMatch('12345', true).name, null);
  assert.deepEqual(splitMulti(['new,pending', ' failed ', '', 'new']), ['new', 'pending', 'failed']);
});

test('a prefix is the range [prefix, prefixEnd(prefix)) in code point order', () => {
  assert.equal(prefixEnd('ab'), 'ac');
  assert.equal(prefixEnd('a\u{10ffff}'), 'b');
  assert.equal(prefixEnd('\ud7ff'), '\ue000');
  assert.equal(prefixEnd(''), null);
  const words = ['ab', 'abz', 'ab\u{10ffff}', 'ac', 'aa', 'a', 'abc-d', 'ab\u00ff'];
  const end = prefixEnd('ab')!;
  const cmp = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)); // UTF-8 byte order, as both engines compare
  assert.deepEqual(
    words.filter((w) => cmp(w, 'ab') >= 0 && cmp(w, end) < 0).sort(),
    words.filter((w) => w.startsWith('ab')).sort(),
  );
});

test('masking keeps enough to tell leads apart and nothing to reach them', () => {
  assert.equal(maskEmail('john.doe@example.com'), 'j***@example.com');
  assert.equal(maskEmail('ödön@example.com'), 'ö***@example.com');
  assert.equal(maskEmail('broken'), '***');
  assert.equal(maskPhone('+4915123456767'), '+49*********67');
  assert.equal(maskPhone('+49301234567'), '+49*******67');
  assert.equal(maskPhone('+12345'), '******');
  assert.equal(
    maskInText('{"e":"John.Doe@Example.com","p":"4915123456767","q":"+4915123456767"}', {
      email: 'john.doe@example.com',
      phone: '+4915123456767',
    }),
    '{"e":"j***@example.com","p":"49*********67","q":"+49*********67"}',
  );
});
