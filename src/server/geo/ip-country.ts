import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import ipaddr from 'ipaddr.js';

// An IP address's country (ISO 3166-1 alpha-2), looked up in memory: no call leaves the host.
// The ranges come from the npm package @ip-location-db/geo-whois-asn-country (README: which and
// why): its "-num" CSV files, one range per line as "first,last,CC" in decimal. They are read
// once per process, when the server is ready (about half a second, in a worker thread), into
// typed arrays (about 11 MB for 334,000 IPv4 and 216,000 IPv6 ranges): IPv4 as 32-bit numbers,
// IPv6 as two 64-bit halves; a lookup is a binary search (a few microseconds).
// Upgrading the package refreshes the data.

const PACKAGE = '@ip-location-db/geo-whois-asn-country';

interface V4 {
  first: Uint32Array;
  last: Uint32Array;
  cc: Uint16Array;
}
interface V6 {
  firstHi: BigUint64Array;
  firstLo: BigUint64Array;
  lastHi: BigUint64Array;
  lastLo: BigUint64Array;
  cc: Uint16Array;
}
export interface CountryRanges {
  v4: V4;
  v6: V6;
}

// Runs in a worker thread (eval'd, as db/checkpointer.ts): the files are read and parsed off the
// event loop, and the arrays' buffers are handed back without a copy. The parse walks the files'
// bytes: no line, field or number becomes a string or a BigInt on the way. Splitting the 26 MB
// of text into lines and each line into fields had the worker's heap and the allocator peak at
// about 125 MB over the server's (VmHWM 320 MB at start-up), and 13 MB of what the allocator
// kept stayed in the server's resident memory afterwards.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const NL = 10, COMMA = 44, ZERO = 48;
// Lines holding a range (not empty), so the arrays are sized before the parse.
const count = (buf) => {
  let n = 0;
  for (let i = 0, start = 0; i <= buf.length; i++) {
    if (i === buf.length || buf[i] === NL) { if (i > start) n++; start = i + 1; }
  }
  return n;
};
// Each line "first,last,CC" with first and last in decimal. parse() sizes the arrays through
// make(n), then hands each line to their range(i, num, cc): num() parses the next field into
// four 32-bit limbs (low first), cc() the country.
const limbs = new Float64Array(4);
const parse = (file, make) => {
  const buf = readFileSync(file);
  const n = count(buf);
  let pos = 0;
  const fail = (what) => { throw new Error(file + ': ' + what + ' at byte ' + pos); };
  const num = () => {
    limbs.fill(0);
    const from = pos;
    for (; pos < buf.length && buf[pos] !== COMMA; pos++) {
      const d = buf[pos] - ZERO;
      if (d < 0 || d > 9) fail('a digit expected');
      let carry = d;
      for (let k = 0; k < 4; k++) {
        const v = limbs[k] * 10 + carry;
        carry = Math.floor(v / 4294967296);
        limbs[k] = v - carry * 4294967296;
      }
      if (carry) fail('a number over 128 bits');
    }
    if (pos === from || pos === buf.length) fail('a number and a comma expected');
    pos++;
  };
  const cc = () => {
    const a = buf[pos], b = buf[pos + 1];
    if (!(a >= 65 && a <= 90 && b >= 65 && b <= 90)) fail('a two-letter country expected');
    pos += 2;
    while (pos < buf.length && buf[pos] !== NL) { if (buf[pos] > 32) fail('the line to end after its country'); pos++; }
    pos++;
    return (a << 8) | b;
  };
  let k = 0;
  const arrays = make(n);
  while (pos < buf.length) {
    if (buf[pos] === NL) { pos++; continue; }
    arrays.range(k++, num, cc);
  }
  return arrays.result;
};
const v4 = parse(workerData.v4, (n) => {
  const r = { first: new Uint32Array(n), last: new Uint32Array(n), cc: new Uint16Array(n) };
  const small = () => { if (limbs[1] || limbs[2] || limbs[3]) throw new Error(workerData.v4 + ': an IPv4 number over 32 bits'); return limbs[0]; };
  return { result: r, range(i, num, cc) { num(); r.first[i] = small(); num(); r.last[i] = small(); r.cc[i] = cc(); } };
});
const v6 = parse(workerData.v6, (n) => {
  const r = { firstHi: new BigUint64Array(n), firstLo: new BigUint64Array(n), lastHi: new BigUint64Array(n), lastLo: new BigUint64Array(n), cc: new Uint16Array(n) };
  const hi = () => (BigInt(limbs[3]) << 32n) | BigInt(limbs[2]);
  const lo = () => (BigInt(limbs[1]) << 32n) | BigInt(limbs[0]);
  return { result: r, range(i, num, cc) { num(); r.firstHi[i] = hi(); r.firstLo[i] = lo(); num(); r.lastHi[i] = hi(); r.lastLo[i] = lo(); r.cc[i] = cc(); } };
});
const buffers = [...Object.values(v4), ...Object.values(v6)].map((a) => a.buffer);
parentPort.postMessage({ v4, v6 }, buffers);
`;

/** Ranges from two "-num" CSV files (sorted by first address, as the package ships them). */
export function loadRanges(v4File: string, v6File: string): Promise<CountryRanges> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { eval: true, workerData: { v4: v4File, v6: v6File } });
    worker.once('message', (ranges: CountryRanges) => {
      resolve(ranges);
      void worker.terminate();
    });
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the IP-to-country loader stopped (exit code ${code})`)));
  });
}

let shipped: CountryRanges | null = null;
let loading: Promise<CountryRanges> | null = null;

/**
 * Starts reading the package's ranges (once per process; the server calls it when it is
 * ready) and resolves with them. Until they are in, lookups answer null.
 */
export function loadShippedRanges(): Promise<CountryRanges> {
  loading ??= (() => {
    const dir = path.dirname(createRequire(import.meta.url).resolve(`${PACKAGE}/package.json`));
    const file = (name: string) => path.join(dir, `geo-whois-asn-country-${name}-num.csv`);
    return loadRanges(file('ipv4'), file('ipv6')).then((r) => (shipped = r));
  })();
  return loading;
}

/** The country of an address from the shipped ranges; null while they are loading. */
export const shippedCountryOf = (ip: string): string | null => (shipped ? countryOf(ip, shipped) : null);

const country = (n: number) => String.fromCharCode(n >> 8, n & 0xff);

/** The index of the last range whose first address is ≤ the address (-1: none). */
function lastAtOrBelow(len: number, below: (i: number) => boolean): number {
  let lo = 0;
  let hi = len - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (below(mid)) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * The country of an address (IPv4, IPv6, IPv4-mapped IPv6), or null when it is not an address
 * or no range holds it (private, loopback and reserved space hold none).
 */
export function countryOf(ip: string, ranges: CountryRanges): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(ip.trim());
  } catch {
    return null;
  }
  if (parsed.range() !== 'unicast') return null;
  const bytes = parsed.toByteArray();
  if (parsed.kind() === 'ipv4') {
    const n = ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0;
    const { first, last, cc } = ranges.v4;
    const i = lastAtOrBelow(first.length, (k) => first[k] <= n);
    return i >= 0 && n <= last[i] ? country(cc[i]) : null;
  }
  let hi = 0n;
  let lo = 0n;
  for (let k = 0; k < 8; k++) hi = (hi << 8n) | BigInt(bytes[k]);
  for (let k = 8; k < 16; k++) lo = (lo << 8n) | BigInt(bytes[k]);
  const v = ranges.v6;
  const i = lastAtOrBelow(v.cc.length, (k) => v.firstHi[k] < hi || (v.firstHi[k] === hi && v.firstLo[k] <= lo));
  if (i < 0) return null;
  const within = hi < v.lastHi[i] || (hi === v.lastHi[i] && lo <= v.lastLo[i]);
  return within ? country(v.cc[i]) : null;
}
