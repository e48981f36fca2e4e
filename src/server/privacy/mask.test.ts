// contactMasker without a database: every spelling of one lead's email and phone that a
// partner's answer may hold is masked; other people's contacts, dates and ids are left alone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { contactMasker, maskContactLike, maskDeep } from './mask.js';

const lead = { email: 'ada.lovelace+news@example.com', phone: '+4915123456789' };
const mask = contactMasker(lead);
const E = 'a***@example.com';

test('the email in every spelling: any case, %-encoded (once or twice), JSON and JS escapes, HTML references', () => {
  const cases: [string, string][] = [
    ['ada.lovelace+news@example.com', E],
    ['to: ADA.Lovelace+NEWS@Example.COM.', `to: ${E}.`],
    ['?e=ada.lovelace%2Bnews%40example.com&x=1', `?e=${E}&x=1`],
    ['?e=ada.lovelace%2bnews%40EXAMPLE.com', `?e=${E}`],
    ['?next=%3Fe%3Dada.lovelace%252Bnews%2540example.com', `?next=%3Fe%3D${E}`],
    ['{"e":"ada.lovelace+news\\u0040example.com"}', `{"e":"${E}"}`],
    ['{"e":"ada.lovelace\\u002Bnews\\u0040example.com"}', `{"e":"${E}"}`],
    ['"{\\"e\\":\\"ada.lovelace+news\\\\u0040example.com\\"}"', `"{\\"e\\":\\"${E}\\"}"`],
    ["'ada.lovelace+news\\x40example.com'", `'${E}'`],
    [
      '<a>ada.lovelace&#43;news&#64;example.com</a> <b>ada.lovelace&plus;news&commat;example.com</b>',
      `<a>${E}</a> <b>${E}</b>`,
    ],
    ['twice: ada.lovelace+news@example.com, ada.lovelace+news@example.com', `twice: ${E}, ${E}`],
  ];
  for (const [text, want] of cases) assert.equal(mask(text), want, text);
  assert.equal(
    contactMasker({ email: 'ödön@exämple.com', phone: '+33612345678' })(
      '%C3%96D%C3%B6n%40ex%C3%A4mple.com or ÖDÖN@EXÄMPLE.COM',
    ),
    'ö***@exämple.com or ö***@exämple.com',
  );
});

test('the phone in every notation: E.164 with or without +, 00, grouped, national with 0, (0), %-encoded, form-encoded', () => {
  const cases: [string, string][] = [
    ['+4915123456789', '+49*********89'],
    ['4915123456789', '49*********89'],
    ['004915123456789', '49*********89'],
    ['tel +49 151 2345 6789.', 'tel +49*********89.'],
    ['+49-151-2345-6789', '+49*********89'],
    ['+49 (0)151 23456789', '+49*********89'],
    ['0151 / 234 567 89', '49*********89'],
    ['015123456789', '49*********89'],
    ['15123456789', '49*********89'],
    ['?p=%2B4915123456789&q=%2B49%20151%202345%206789', '?p=%2B49*********89&q=%2B49*********89'],
    ['p=%2B49+151+2345+6789', 'p=%2B49*********89'],
    ['{"p":"\\u002B4915123456789"}', '{"p":"\\u002B49*********89"}'],
  ];
  for (const [text, want] of cases) assert.equal(mask(text), want, text);
});

test('everything else is left as it was', () => {
  for (const text of [
    'someone.else@example.com',
    'ada.lovelace@example.com',
    '+4915123456780',
    '2026-11-21T10:00:00.000Z',
    '203.0.113.7',
    '01900000-0000-7000-8000-000000000000',
    'HTTP 409: duplicate in broker CRM',
    '',
    'P-77',
    '%zz \\q &#xZZ; &unknown;',
  ]) {
    assert.equal(mask(text), text, text);
  }
  // A lead without usable contacts masks nothing (and does not throw).
  assert.equal(contactMasker({ email: '', phone: '' })('+4915123456789 a@b.c'), '+4915123456789 a@b.c');
});

test('maskDeep masks every string in a JSON value; maskContactLike masks what looks like any email or phone', () => {
  assert.deepEqual(maskDeep({ a: ['x ada.lovelace+news@example.com', 3, null], b: { c: '4915123456789' } }, mask), {
    a: [`x ${E}`, 3, null],
    b: { c: '49*********89' },
  });
  assert.equal(maskContactLike('Ada.Lovelace@Example.com'), 'a***@example.com');
  assert.equal(maskContactLike('ada%40example.com'), 'a***@example.com');
  assert.equal(maskContactLike('+49 151 2345-6789'), '+49*********89');
  assert.equal(maskContactLike('Ada Lovelace'), 'Ada Lovelace');
});

test('masking is linear: a long text and many leads take no more than a few microseconds per field', () => {
  const long = `{"error":"dup ${'x'.repeat(5000)} ada.lovelace+news@example.com ${'1 2 '.repeat(2000)} %2B4915123456789"}`;
  let t0 = performance.now();
  const out = mask(long);
  assert.ok(!out.includes('4915123456789') && !out.includes('ada.lovelace'));
  assert.ok(performance.now() - t0 < 50, 'a 13 kB text in well under 50 ms');
  t0 = performance.now();
  for (let i = 0; i < 5000; i++) {
    const m = contactMasker({ email: `lead${i}@example.test`, phone: `+4915${String(i).padStart(9, '0')}` });
    for (let f = 0; f < 10; f++) m(`reason ${f}: partner said no for lead${i}@example.test`);
  }
  assert.ok(performance.now() - t0 < 2000, `5000 leads × 10 fields in ${Math.round(performance.now() - t0)} ms`);
});
