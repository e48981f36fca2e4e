// The IP-to-country lookup: exact range edges on both address families, from files a test writes
// (addresses here are data: nothing is sent to them), and the shipped package's ranges.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { countryOf, loadRanges, loadShippedRanges, shippedCountryOf } from './ip-country.js';

const v6num = (ip: string) => {
  const [head, tail = ''] = ip.split('::');
  const groups = (s: string) => (s ? s.split(':') : []);
  const h = groups(head);
  const t = groups(tail);
  const all = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  return all.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n).toString();
};
const v4num = (ip: string) => String(ip.split('.').reduce((n, o) => n * 256 + Number(o), 0));

test('a range holds its first and last address and nothing beside them, IPv4 and IPv6', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-geo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const v4 = path.join(dir, 'v4.csv');
  const v6 = path.join(dir, 'v6.csv');
  writeFileSync(
    v4,
    [
      `${v4num('1.0.0.0')},${v4num('1.0.0.255')},AU`,
      `${v4num('1.0.2.0')},${v4num('1.0.3.255')},CN`,
      `${v4num('203.0.0.0')},${v4num('223.255.255.255')},JP`,
    ].join('\n') + '\n',
  );
  writeFileSync(
    v6,
    [
      // Two ranges inside one /64: the low halves decide.
      `${v6num('2a00:1::')},${v6num('2a00:1::ff')},DE`,
      `${v6num('2a00:1::100')},${v6num('2a00:1:0:1:ffff:ffff:ffff:ffff')},FR`,
      `${v6num('2c0f:f000::')},${v6num('2c0f:ffff:ffff:ffff:ffff:ffff:ffff:ffff')},ZA`,
    ].join('\n') + '\n',
  );
  const r = await loadRanges(v4, v6);
  assert.equal(countryOf('1.0.0.0', r), 'AU');
  assert.equal(countryOf('1.0.0.255', r), 'AU');
  assert.equal(countryOf('1.0.1.0', r), null, 'a gap between ranges');
  assert.equal(countryOf('1.0.2.0', r), 'CN');
  assert.equal(countryOf('0.255.255.255', r), null, 'below the first range');
  assert.equal(countryOf('223.255.255.255', r), 'JP', 'a range past 2^31 (unsigned)');
  assert.equal(countryOf('::ffff:1.0.3.7', r), 'CN', 'IPv4-mapped IPv6 is the IPv4 address');
  assert.equal(countryOf('2a00:1::ff', r), 'DE');
  assert.equal(countryOf('2a00:1::100', r), 'FR');
  assert.equal(countryOf('2a00:1:0:1:ffff:ffff:ffff:ffff', r), 'FR');
  assert.equal(countryOf('2a00:1:0:2::', r), null, 'one past the last address');
  assert.equal(countryOf('2c0f:ffff::1', r), 'ZA');
  for (const notPublic of ['10.0.0.1', '127.0.0.1', '192.168.1.1', '::1', 'fe80::1', '2001:db8::1'])
    assert.equal(countryOf(notPublic, r), null, `${notPublic} is not public: no country`);
  for (const bad of ['', 'x', '1.2.3', '300.1.1.1', '1.0.0.1; drop'])
    assert.equal(countryOf(bad, r), null, `"${bad}" is not an address`);
});

test('the files are read as bytes: CRLF and blank lines pass, a malformed line names its file and byte', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-geo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };
  // The largest IPv6 number (2^128 - 1) is 39 digits: every limb of the parse is used.
  const top = ((1n << 128n) - 1n).toString();
  const v6 = write('v6.csv', `${v6num('2a00:1::')},${top},NL\r\n`);
  const r = await loadRanges(write('v4.csv', `\n${v4num('1.0.0.0')},${v4num('1.0.0.255')},AU\r\n\n`), v6);
  assert.equal(r.v4.cc.filter((c) => c !== 0).length, 1, 'blank lines hold no range');
  assert.equal(countryOf('1.0.0.9', r), 'AU');
  assert.equal(countryOf('2c0f:ffff::1', r), 'NL', 'inside a range that ends at 2^128 - 1');
  assert.equal(r.v6.cc.length, 1, 'no gap after a range that ends at 2^128 - 1');
  for (const [text, why] of [
    ['16777216,16777471,au\n', /a two-letter country expected at byte 18/],
    ['16777216,1677x471,AU\n', /a digit expected at byte 13/],
    ['16777216,16777471\n', /a digit expected at byte 17|a number and a comma expected/],
    ['4294967296,4294967296,AU\n', /an IPv4 number over 32 bits/],
    ['16777216,16777471,AU,extra\n', /the line to end after its country/],
  ] as const) {
    const file = write('bad.csv', text);
    await assert.rejects(loadRanges(file, v6), (err: Error) => {
      assert.ok(err.message.includes(file), err.message);
      assert.match(err.message, why);
      return true;
    });
  }
  // Out of order: a range starting before the one above it, a range ending before it starts.
  for (const text of ['16777216,16777471,AU\n1,2,DE\n', '16777471,16777216,AU\n']) {
    const file = write('disorder.csv', text);
    await assert.rejects(loadRanges(file, v6), /range \d starts before the range before it, or ends before it starts/);
  }
  // Ranges inside ranges, as the shipped files list them: the range listed last among those
  // starting at or below an address holds it, none when that one ends before it.
  const nested = [
    ['1.0.0.0', '1.0.3.255', 'DE'],
    ['1.0.1.0', '1.0.1.0', 'BE'],
    ['1.0.1.1', '1.0.1.9', 'DE'],
    ['1.0.4.0', '1.0.9.255', 'JP'],
    ['1.0.4.0', '1.0.5.255', 'NL'],
    ['1.0.4.0', '1.0.4.255', 'GB'],
    ['1.0.5.0', '1.0.5.9', 'US'],
  ];
  const inside = await loadRanges(
    write('nested.csv', nested.map(([a, b, cc]) => `${v4num(a)},${v4num(b)},${cc}`).join('\n')),
    v6,
  );
  for (const [ip, country] of [
    ['1.0.0.255', 'DE'],
    ['1.0.1.0', 'BE'],
    ['1.0.1.9', 'DE'],
    ['1.0.1.10', null],
    ['1.0.3.255', null],
    ['1.0.4.0', 'GB'],
    ['1.0.4.255', 'GB'],
    ['1.0.5.0', 'US'],
    ['1.0.5.10', null],
    ['1.0.9.255', null],
    ['1.0.10.0', null],
  ])
    assert.equal(countryOf(ip!, inside), country, ip!);
  const big = write('big.csv', `${(1n << 128n).toString()},1,DE\n`);
  await assert.rejects(loadRanges(write('v4ok.csv', ''), big), /a number over 128 bits/);
});

test('files longer than a read: lines cut between reads parse whole, and an error names its byte in the file', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-geo-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // The loader reads 64 KB at a time: 20,000 IPv4 lines (~450 KB) and 4,000 IPv6 lines of about
  // 85 bytes (~340 KB) put line breaks at every offset within a read. Every third range ends
  // right before the next one starts; the others leave a gap.
  const letters = (i: number) => String.fromCharCode(65 + (i % 26), 65 + ((i * 7) % 26));
  const v4: [number, number, string][] = [];
  for (let i = 0, at = 16_777_216; i < 20_000; i++, at += 300)
    v4.push([at, i % 3 === 0 ? at + 299 : at + 200 + (i % 90), letters(i)]);
  const v6: [bigint, bigint, string][] = [];
  for (let i = 0n, at = 0x2a00n << 112n; i < 4000n; i++, at += 1n << 90n)
    v6.push([at + i, i % 3n === 0n ? at + (1n << 90n) + i : at + (1n << 89n), letters(Number(i))]);
  const v4File = path.join(dir, 'v4.csv');
  const v6File = path.join(dir, 'v6.csv');
  writeFileSync(v4File, v4.map((r) => r.join(',')).join('\n') + '\n');
  writeFileSync(v6File, v6.map((r) => r.join(',')).join('\r\n')); // CRLF, no final line break
  const r = await loadRanges(v4File, v6File);
  const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  const colons = (n: bigint) =>
    Array.from({ length: 8 }, (_, k) => ((n >> BigInt(112 - 16 * k)) & 0xffffn).toString(16)).join(':');
  const check = <N extends number | bigint>(lines: [N, N, string][], address: (n: N) => string, plus1: (n: N) => N) =>
    lines.forEach(([first, last, country], i) => {
      const next = lines[i + 1];
      const after = next && next[0] === plus1(last) ? next[2] : null;
      const got = [countryOf(address(first), r), countryOf(address(last), r), countryOf(address(plus1(last)), r)];
      assert.deepEqual(got, [country, country, after], `line ${i + 1}: its first, its last, the address after`);
    });
  check(v4, dotted, (n) => n + 1);
  check(v6, colons, (n) => n + 1n);
  // A bad country on line 15,001, well past the first read: its byte is counted from the file's start.
  const lines = v4.map((x) => x.join(','));
  lines[15_000] = lines[15_000].slice(0, -2) + 'x1';
  const bad = path.join(dir, 'bad.csv');
  writeFileSync(bad, lines.join('\n') + '\n');
  const at = lines.slice(0, 15_000).join('\n').length + 1 + lines[15_000].length - 2;
  await assert.rejects(loadRanges(bad, v6File), new RegExp(`a two-letter country expected at byte ${at}$`));
});

test('the shipped ranges: read once per process; well-known blocks have their countries', async () => {
  const first = loadShippedRanges();
  assert.equal(loadShippedRanges(), first, 'one load per process');
  const r = await first;
  assert.ok(r.v4.cc.length > 100_000 && r.v6.cc.length > 50_000, 'the whole database is in');
  // Long-standing allocations: Google's public resolver (US), the DE-NIC registry block (DE).
  assert.equal(shippedCountryOf('8.8.8.8'), 'US');
  assert.equal(countryOf('81.91.160.0', r), 'DE');
  assert.equal(shippedCountryOf('127.0.0.1'), null);
});
