import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import ipaddr from 'ipaddr.js';

// An IP address's country (ISO 3166-1 alpha-2), looked up in memory: no call leaves the host.
// The ranges come from the npm package @ip-location-db/geo-whois-asn-country (README: which and
// why): its "-num" CSV files, one range per line as "first,last,CC" in decimal. They are read
// once per process, when the server is ready (about half a second, in a worker thread), into
// typed arrays (about 7 MB): IPv4 as 32-bit numbers, IPv6 as two 64-bit halves; a lookup is a
// binary search (a few microseconds).
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
// event loop, and the arrays' buffers are handed back without a copy.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const MASK64 = (1n << 64n) - 1n;
const code = (cc) => (cc.charCodeAt(0) << 8) | cc.charCodeAt(1);
const lines = (file) => readFileSync(file, 'utf8').split('\\n').filter((l) => l.length > 0);
const l4 = lines(workerData.v4);
const v4 = { first: new Uint32Array(l4.length), last: new Uint32Array(l4.length), cc: new Uint16Array(l4.length) };
l4.forEach((line, i) => {
  const [a, b, cc] = line.split(',');
  v4.first[i] = Number(a); v4.last[i] = Number(b); v4.cc[i] = code(cc.trim());
});
const l6 = lines(workerData.v6);
const n = l6.length;
const v6 = { firstHi: new BigUint64Array(n), firstLo: new BigUint64Array(n), lastHi: new BigUint64Array(n), lastLo: new BigUint64Array(n), cc: new Uint16Array(n) };
l6.forEach((line, i) => {
  const [a, b, cc] = line.split(',');
  const first = BigInt(a), last = BigInt(b);
  v6.firstHi[i] = first >> 64n; v6.firstLo[i] = first & MASK64;
  v6.lastHi[i] = last >> 64n; v6.lastLo[i] = last & MASK64;
  v6.cc[i] = code(cc.trim());
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
