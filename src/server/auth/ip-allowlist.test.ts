// Unit tests of CIDR parsing and the allow-list matcher: no database, no HTTP.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { IpAllowList, normalizeIp, parseCidr } from './ip-allowlist.js';

describe('parseCidr', () => {
  test('accepts IPv4 CIDRs and bare addresses, in canonical address/prefix form', () => {
    assert.equal(parseCidr('10.0.0.0/8'), '10.0.0.0/8');
    assert.equal(parseCidr('192.168.1.0/24'), '192.168.1.0/24');
    assert.equal(parseCidr('127.0.0.1'), '127.0.0.1/32');
    assert.equal(parseCidr('0.0.0.0/0'), '0.0.0.0/0');
    assert.equal(parseCidr('1.2.3.4/32'), '1.2.3.4/32');
    assert.equal(parseCidr('  203.0.113.7/32  '), '203.0.113.7/32', 'surrounding spaces are ignored');
  });

  test('accepts IPv6 CIDRs and bare addresses, lower-casing them', () => {
    assert.equal(parseCidr('::1'), '::1/128');
    assert.equal(parseCidr('::1/128'), '::1/128');
    assert.equal(parseCidr('2001:db8::/32'), '2001:db8::/32');
    assert.equal(parseCidr('2001:DB8::/32'), '2001:db8::/32');
    assert.equal(parseCidr('FE80::ABCD'), 'fe80::abcd/128');
    assert.equal(parseCidr('::/0'), '::/0');
  });

  test('an IPv4-mapped IPv6 address is the IPv4 address', () => {
    assert.equal(parseCidr('::ffff:10.1.2.3'), '10.1.2.3/32');
    assert.equal(parseCidr('::FFFF:10.1.2.3'), '10.1.2.3/32');
  });

  test('refuses a prefix out of range', () => {
    assert.equal(parseCidr('10.0.0.0/33'), null);
    assert.equal(parseCidr('10.0.0.0/999'), null);
    assert.equal(parseCidr('2001:db8::/129'), null);
    assert.equal(parseCidr('10.0.0.0/-1'), null);
    assert.equal(parseCidr('10.0.0.0/1000'), null);
  });

  test('refuses garbage, empty parts and extra slashes', () => {
    for (const bad of [
      '',
      '   ',
      'not-an-ip',
      'localhost',
      '10.0.0',
      '256.0.0.1',
      '10.0.0.0/',
      '/24',
      '10.0.0.0/8/8',
      '10.0.0.0//8',
      '10.0.0.0/ 8',
      '10.0.0.0/8a',
      '10.0.0.0/0x8',
      '2001:db8:::/32',
      '2001:db8::g/64',
      '1.2.3.4.5',
    ]) {
      assert.equal(parseCidr(bad), null, `"${bad}" must be refused`);
    }
  });
});

describe('normalizeIp', () => {
  test('unwraps IPv4-mapped IPv6 and leaves everything else alone', () => {
    assert.equal(normalizeIp('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(normalizeIp('::FFFF:192.0.2.1'), '192.0.2.1');
    assert.equal(normalizeIp('127.0.0.1'), '127.0.0.1');
    assert.equal(normalizeIp('::1'), '::1');
    assert.equal(normalizeIp('2001:db8::1'), '2001:db8::1');
  });
});

describe('IpAllowList', () => {
  test('an empty list allows every address', () => {
    const list = new IpAllowList([]);
    assert.equal(list.empty, true);
    for (const ip of ['127.0.0.1', '8.8.8.8', '::1', '2001:db8::1', '::ffff:10.0.0.1'])
      assert.equal(list.allows(ip), true, ip);
  });

  test('IPv4: inside the subnet is allowed, outside is blocked', () => {
    const list = new IpAllowList(['10.0.0.0/8', '192.168.1.5/32']);
    assert.equal(list.empty, false);
    assert.equal(list.allows('10.0.0.1'), true);
    assert.equal(list.allows('10.255.255.255'), true);
    assert.equal(list.allows('11.0.0.0'), false);
    assert.equal(list.allows('9.255.255.255'), false);
    assert.equal(list.allows('192.168.1.5'), true);
    assert.equal(list.allows('192.168.1.6'), false);
  });

  test('IPv6: inside the subnet is allowed, outside is blocked; v4 entries do not admit v6', () => {
    const list = new IpAllowList(['2001:db8::/32', '::1/128', '127.0.0.1/32']);
    assert.equal(list.allows('2001:db8::1'), true);
    assert.equal(list.allows('2001:db8:ffff::abcd'), true);
    assert.equal(list.allows('2001:DB8::1'), true);
    assert.equal(list.allows('2001:db9::1'), false);
    assert.equal(list.allows('::1'), true);
    assert.equal(list.allows('::2'), false);
    assert.equal(new IpAllowList(['127.0.0.1/32']).allows('::1'), false);
  });

  test('an IPv4-mapped caller is judged as its IPv4 address', () => {
    const list = new IpAllowList(['127.0.0.1/32']);
    assert.equal(list.allows('::ffff:127.0.0.1'), true);
    assert.equal(list.allows('::ffff:127.0.0.2'), false);
  });

  test('a prefix of 0 allows the whole family only', () => {
    const v4 = new IpAllowList(['0.0.0.0/0']);
    assert.equal(v4.allows('203.0.113.9'), true);
    assert.equal(v4.allows('2001:db8::1'), false);
    const v6 = new IpAllowList(['::/0']);
    assert.equal(v6.allows('2001:db8::1'), true);
  });

  test('something that is not an address is blocked by a non-empty list', () => {
    const list = new IpAllowList(['0.0.0.0/0']);
    assert.equal(list.allows(''), false);
    assert.equal(list.allows('garbage'), false);
  });
});
