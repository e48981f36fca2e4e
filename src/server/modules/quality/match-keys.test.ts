import assert from 'node:assert/strict';
import { test } from 'node:test';
import { entryKey, leadKeys, shapeOf, type BlockKind } from './match-keys.js';

const lead = (over: Partial<Parameters<typeof leadKeys>[0]> = {}) => ({
  email: 'ada@example.com',
  phone: '+4915112345678',
  ip: '203.0.113.7',
  sub_id1: null,
  sub_id2: null,
  sub_id3: null,
  sub_id4: null,
  sub_id5: null,
  ...over,
});

const key = (kind: BlockKind, value: string) => {
  const e = entryKey(kind, value);
  assert.ok('key' in e, `${kind} ${value}: ${'error' in e ? e.error : ''}`);
  return e;
};
const error = (kind: BlockKind, value: string) => {
  const e = entryKey(kind, value);
  assert.ok('error' in e, `${kind} ${value} was taken as ${JSON.stringify(e)}`);
  return e.error;
};
const blocks = (kind: BlockKind, value: string, l: Parameters<typeof leadKeys>[0]) =>
  leadKeys(l).includes(key(kind, value).key);

test('an email entry matches every case and Unicode spelling of the address, and no other', () => {
  for (const spelling of ['ADA@Example.COM', ' ada@example.com ', 'ａｄａ@ｅｘａｍｐｌｅ.ｃｏｍ'])
    assert.ok(blocks('email', spelling, lead()), spelling);
  assert.equal(key('email', 'ADA@Example.COM').value, 'ada@example.com');
  assert.ok(!blocks('email', 'ada@example.org', lead()));
  assert.ok(!blocks('email', 'ada2@example.com', lead()));
  // An internationalized domain is the same mailbox in Unicode and in ASCII (IDNA).
  assert.ok(blocks('email', 'max@BÜCHER.de', lead({ email: 'max@xn--bcher-kva.de' })));
  assert.ok(blocks('email', 'max@xn--bcher-kva.de', lead({ email: 'max@bücher.de' })));
  assert.match(error('email', 'not an email'), /not a valid email/);
});

test('an email domain entry matches the domain and its subdomains, not lookalikes', () => {
  assert.ok(blocks('email_domain', 'example.com', lead()));
  assert.ok(blocks('email_domain', '@Example.com', lead({ email: 'x@mail.eu.example.com' })));
  assert.ok(blocks('email_domain', '*.example.com', lead({ email: 'x@mail.example.com' })));
  assert.ok(!blocks('email_domain', 'example.com', lead({ email: 'x@notexample.com' })));
  assert.ok(!blocks('email_domain', 'mail.example.com', lead({ email: 'x@example.com' })));
  assert.ok(blocks('email_domain', 'bücher.de', lead({ email: 'x@XN--BCHER-KVA.de' })));
  assert.match(error('email_domain', 'exa mple.com'), /not a domain/);
  assert.match(error('email_domain', '-bad-.com'), /not a domain/);
});

test('a phone entry is one number in any international spelling; a national number is refused', () => {
  assert.equal(key('phone', '+49 (151) 1234-5678').value, '+4915112345678');
  assert.ok(blocks('phone', '+49 151 12345678', lead()));
  assert.ok(blocks('phone', '＋４９１５１１２３４５６７８', lead()));
  assert.ok(!blocks('phone', '+4915112345679', lead()));
  assert.match(error('phone', '015112345678'), /international format/);
  assert.match(error('phone', '+49 1'), /not a valid phone number|international/);
});

test('an IP entry is an address or a CIDR block, IPv4 and IPv6, matched by containment', () => {
  assert.ok(blocks('ip', '203.0.113.7', lead()));
  assert.ok(!blocks('ip', '203.0.113.8', lead()));
  for (const block of ['203.0.113.0/24', '203.0.112.0/23', '203.0.0.0/16', '0.0.0.0/0', '203.0.113.6/31'])
    assert.ok(blocks('ip', block, lead()), block);
  for (const block of ['203.0.114.0/24', '203.0.113.8/29', '10.0.0.0/8'])
    assert.ok(!blocks('ip', block, lead()), block);
  // Host bits past the prefix: refused, naming the network meant.
  assert.match(error('ip', '203.0.113.7/24'), /the block is 203\.0\.113\.0\/24/);
  assert.match(error('ip', '203.0.113.0/33'), /prefix length that is not 0–32/);
  assert.match(error('ip', '203.0.113'), /not an IPv4 or IPv6/);
  // IPv6: compressed or not, upper or lower case; IPv4-mapped addresses are IPv4.
  const v6 = lead({ ip: '2001:db8:1::5' });
  for (const block of ['2001:DB8::/32', '2001:0db8:0001:0000:0000:0000:0000:0005', '2001:db8::/31', '::/0'])
    assert.ok(blocks('ip', block, v6), block);
  for (const block of ['2001:db9::/32', '2001:db8:2::/48', '0.0.0.0/0']) assert.ok(!blocks('ip', block, v6), block);
  assert.equal(key('ip', '2001:0DB8:0000::/48').value, '2001:db8::/48');
  assert.equal(key('ip', '::ffff:203.0.113.7').value, '203.0.113.7');
  assert.ok(blocks('ip', '::ffff:203.0.113.0/120', lead()));
  assert.ok(blocks('ip', '203.0.113.7', lead({ ip: '::ffff:cb00:7107' })));
  assert.match(error('ip', '2001:db8::1/33'), /the block is 2001:db8::\/33/);
});

test('a sub id entry matches that value in any of the five sub ids, exactly', () => {
  assert.ok(blocks('sub_id', 'src-42', lead({ sub_id3: 'src-42' })));
  assert.ok(blocks('sub_id', ' src-42 ', lead({ sub_id1: 'src-42' })));
  assert.ok(!blocks('sub_id', 'src-42', lead({ sub_id1: 'SRC-42' })));
  assert.ok(!blocks('sub_id', 'src-42', lead()));
  assert.match(error('sub_id', '   '), /must not be empty/);
});

test("a lead's keys hold exactly one block per prefix length of its address", () => {
  assert.equal(leadKeys(lead()).filter((k) => k.startsWith('ip4:')).length, 33);
  assert.equal(leadKeys(lead({ ip: '2001:db8::1' })).filter((k) => k.startsWith('ip6:')).length, 129);
});

test('with the shapes the lists hold, a lead has only the keys that could match', () => {
  const l = lead({ sub_id2: 'src-1' });
  assert.deepEqual(leadKeys(l, new Set()), []);
  assert.deepEqual(leadKeys(l, new Set(['ip4/24'])), [key('ip', '203.0.113.0/24').key]);
  assert.deepEqual(leadKeys(l, new Set(['ip6/48', 'phone'])), ['phone:+4915112345678']);
  assert.deepEqual(leadKeys(l, new Set(['email_domain', 'sub_id'])), ['domain:example.com', 'domain:com', 'sub:src-1']);
  // Every key a shape allows is among the lead's keys without shapes.
  const all = new Set(leadKeys(l));
  const shapes = new Set(['email', 'email_domain', 'phone', 'sub_id', 'ip4/0', 'ip4/24', 'ip4/32']);
  for (const k of leadKeys(l, shapes)) assert.ok(all.has(k), k);
  assert.equal(shapeOf('ip', key('ip', '2001:db8::/32').key), 'ip6/32');
  assert.equal(shapeOf('ip', key('ip', '203.0.113.7').key), 'ip4/32');
  assert.equal(shapeOf('email', key('email', 'a@b.example').key), 'email');
});
