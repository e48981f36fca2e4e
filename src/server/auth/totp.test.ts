import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base32Decode, base32Encode, hotp, matchStep, newSecret, otpauthUri, stepAt, totpAt } from './totp.js';

// RFC 6238 Appendix B: seeds are the ASCII digits repeated to the hash's key length; 8 digits.
const SEEDS = {
  sha1: Buffer.from('12345678901234567890'),
  sha256: Buffer.from('12345678901234567890123456789012'),
  sha512: Buffer.from('1234567890123456789012345678901234567890123456789012345678901234'),
};
const VECTORS: [number, string, string, string][] = [
  [59, '94287082', '46119246', '90693936'],
  [1111111109, '07081804', '68084774', '25091201'],
  [1111111111, '14050471', '67062674', '99943326'],
  [1234567890, '89005924', '91819424', '93441116'],
  [2000000000, '69279037', '90698825', '38618901'],
  [20000000000, '65353130', '77737706', '47863826'],
];

test('RFC 6238 test vectors (SHA-1, SHA-256, SHA-512; 8 digits)', () => {
  for (const [seconds, sha1, sha256, sha512] of VECTORS) {
    const step = stepAt(seconds * 1000);
    assert.equal(hotp(SEEDS.sha1, step, 8, 'sha1'), sha1, `sha1 at ${seconds}`);
    assert.equal(hotp(SEEDS.sha256, step, 8, 'sha256'), sha256, `sha256 at ${seconds}`);
    assert.equal(hotp(SEEDS.sha512, step, 8, 'sha512'), sha512, `sha512 at ${seconds}`);
  }
});

test('RFC 4226 Appendix D HOTP values (6 digits)', () => {
  const expected = ['755224', '287082', '359152', '969429', '338314', '254676', '287922', '162583', '399871', '520489'];
  expected.forEach((code, counter) => assert.equal(hotp(SEEDS.sha1, counter), code));
});

test('the default 6-digit code is the last six digits of the SHA-1 vector', () => {
  const secret = base32Encode(SEEDS.sha1);
  assert.equal(secret, 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  for (const [seconds, sha1] of VECTORS) assert.equal(totpAt(secret, seconds * 1000), sha1.slice(2));
});

test('base32: RFC 4648 vectors, round trips, forgiving input, refusal of other characters', () => {
  const cases: [string, string][] = [
    ['', ''],
    ['f', 'MY'],
    ['fo', 'MZXQ'],
    ['foo', 'MZXW6'],
    ['foob', 'MZXW6YQ'],
    ['fooba', 'MZXW6YTB'],
    ['foobar', 'MZXW6YTBOI'],
  ];
  for (const [plain, encoded] of cases) {
    assert.equal(base32Encode(Buffer.from(plain)), encoded);
    assert.equal(base32Decode(encoded)!.toString(), plain);
  }
  assert.equal(base32Decode('mzxw 6ytb oi======')!.toString(), 'foobar');
  assert.equal(base32Decode('MZXW1'), null, '1 is not in the alphabet');
  assert.equal(base32Decode('MZ!W'), null);
  for (let i = 0; i < 20; i++) {
    const s = newSecret();
    assert.match(s, /^[A-Z2-7]{32}$/);
    assert.equal(base32Decode(s)!.length, 20);
    assert.equal(base32Encode(base32Decode(s)!), s);
  }
});

test('matchStep accepts the current step and one either side, nothing further or malformed', () => {
  const secret = newSecret();
  const now = 1_700_000_000_000;
  const step = stepAt(now);
  const codeAt = (s: number) => totpAt(secret, s * 30_000);
  assert.equal(matchStep(secret, codeAt(step), now), step);
  assert.equal(matchStep(secret, codeAt(step - 1), now), step - 1);
  assert.equal(matchStep(secret, codeAt(step + 1), now), step + 1);
  // Two steps away is refused (unless it collides with a code inside the window by chance).
  const far = codeAt(step - 2);
  if (![step - 1, step, step + 1].some((s) => codeAt(s) === far)) assert.equal(matchStep(secret, far, now), null);
  const farAhead = codeAt(step + 2);
  if (![step - 1, step, step + 1].some((s) => codeAt(s) === farAhead))
    assert.equal(matchStep(secret, farAhead, now), null);
  for (const bad of ['', '12345', '1234567', 'abcdef', ' 123456', '12 3456'])
    assert.equal(matchStep(secret, bad, now), null, bad);
  assert.equal(matchStep('not base32!', '123456', now), null);
});

test('otpauth URI carries the secret, issuer and account', () => {
  const uri = new URL(otpauthUri('JBSWY3DPEHPK3PXP', 'ann@example.test'));
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.host, 'totp');
  assert.equal(decodeURIComponent(uri.pathname), '/Leadgate:ann@example.test');
  assert.equal(uri.searchParams.get('secret'), 'JBSWY3DPEHPK3PXP');
  assert.equal(uri.searchParams.get('issuer'), 'Leadgate');
  assert.equal(uri.searchParams.get('digits'), '6');
  assert.equal(uri.searchParams.get('period'), '30');
});
