import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadShippedRanges, shippedCountryOf } from '../../geo/ip-country.js';
import { flagNames, isDisposableDomain, leadFlags, maskOf, qualityScore, DEFAULT_WEIGHTS, FLAGS } from './flags.js';

const de = { email: 'ada@example.com', phone: '+4915112345678', country: 'DE', ip: '193.99.144.80' };
const flags = (over: Partial<typeof de>, ipCountry: (ip: string) => string | null = () => null) =>
  flagNames(leadFlags({ ...de, ...over }, ipCountry));

test('phone flags: a number of another country; a valid number that is neither mobile nor fixed line', () => {
  assert.deepEqual(flags({}), []);
  assert.deepEqual(flags({ phone: '+33612345678' }), ['phone_country']);
  assert.deepEqual(flags({ phone: '+33612345678', country: 'FR' }), []);
  assert.deepEqual(flags({ phone: '+4930123456' }), [], 'a fixed line');
  assert.deepEqual(flags({ phone: '+4980012345678' }), ['phone_type'], 'toll-free');
  assert.deepEqual(flags({ phone: '+4918012345678' }), ['phone_type'], 'shared cost');
});

test('disposable email: the domain or a parent on the shipped list, any case', () => {
  assert.deepEqual(flags({ email: 'x@mailinator.com' }), ['disposable_email']);
  assert.deepEqual(flags({ email: 'x@MAILINATOR.com' }), ['disposable_email']);
  assert.ok(isDisposableDomain('eu.mailinator.com'));
  assert.ok(!isDisposableDomain('gmail.com'));
  assert.ok(!isDisposableDomain('example.com'));
});

test("IP country: another country than the lead's; unknown addresses raise nothing", async () => {
  assert.deepEqual(
    flags({ ip: '8.8.8.8' }, (ip) => (ip === '8.8.8.8' ? 'US' : null)),
    ['ip_country'],
  );
  assert.deepEqual(
    flags({}, () => 'DE'),
    [],
  );
  assert.deepEqual(
    flags({ ip: '10.0.0.1' }, () => null),
    [],
  );
  // The shipped database, as intake uses it (addresses as data; nothing is sent anywhere).
  await loadShippedRanges();
  assert.deepEqual(flags({ ip: '8.8.8.8' }, shippedCountryOf), ['ip_country']);
  assert.deepEqual(flags({ ip: '193.99.144.80' }, shippedCountryOf), []);
  assert.deepEqual(flags({ ip: '203.0.113.7' }, shippedCountryOf), []);
});

test('the score is 100 less the weights of the flags raised, never below 0', () => {
  assert.equal(qualityScore(0, DEFAULT_WEIGHTS), 100);
  assert.equal(qualityScore(maskOf(['phone_country']), DEFAULT_WEIGHTS), 100 - DEFAULT_WEIGHTS.phone_country);
  assert.equal(
    qualityScore(maskOf(['phone_country', 'disposable_email']), { phone_country: 5, disposable_email: 10 }),
    85,
  );
  assert.equal(qualityScore(maskOf([...FLAGS]), DEFAULT_WEIGHTS), 0);
  assert.deepEqual(flagNames(maskOf(['ip_country', 'phone_type'])), ['phone_type', 'ip_country']);
});

test("intake's own parse of the phone is used when given (validation parsed it already)", () => {
  const known = (country: string | null, type: string | null) =>
    flagNames(leadFlags(de, () => null, { country, type }));
  assert.deepEqual(known('DE', 'MOBILE'), []);
  assert.deepEqual(known('FR', 'MOBILE'), ['phone_country']);
  assert.deepEqual(known('DE', 'VOIP'), ['phone_type']);
  assert.deepEqual(known('DE', null), ['phone_type']);
});
