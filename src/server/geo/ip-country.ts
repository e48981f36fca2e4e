import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import ipaddr from 'ipaddr.js';

// An IP address's country (ISO 3166-1 alpha-2), looked up in memory: no call leaves the host.
// The ranges come from the npm package @ip-location-db/geo-whois-asn-country (README: which and
// why): its "-num" CSV files, one range per line as "first,last,CC" in decimal. They are read
// once per process, when the server is ready (below), into typed arrays (about 7 MB for 334,000
// IPv4 and 216,000 IPv6 ranges and the gaps between them): IPv4 as 32-bit numbers, IPv6 as two
// 64-bit halves; a lookup is a binary search (a few microseconds).
// Upgrading the package refreshes the data.

const PACKAGE = '@ip-location-db/geo-whois-asn-country';

// Entry i holds the addresses from its first up to the next entry's first (the last entry: up to
// the family's last address), in country cc[i]; 0 marks a gap that no range holds. The files list
// some ranges inside others (a block, then a part of it given to another country, then the rest
// again): an address is in the range listed last among those starting at or below it, and none
// when that range ends before it. The entries keep exactly that without storing any range's last
// address (11 MB for the shipped files with them).
interface V4 {
  first: Uint32Array;
  cc: Uint16Array;
}
interface V6 {
  firstHi: BigUint64Array;
  firstLo: BigUint64Array;
  cc: Uint16Array;
}
export interface CountryRanges {
  v4: V4;
  v6: V6;
}

// The files are read 64 KB at a time on the event loop, which runs between reads (a chunk parses
// in under 10 ms; the whole load takes about 0.7 s), and parsed as bytes: no line, field or
// number becomes a string or a BigInt on the way, and nothing but the arrays outlives the load.
// A worker thread that read both files whole took the server's peak resident memory 33-37 MB
// over its steady state at start-up (bench/RESULTS.md); before that, splitting the 26 MB of text
// into lines and fields in the worker peaked at about 125 MB.
const CHUNK = 64 * 1024;
const NL = 10;
const COMMA = 44;
const ZERO = 48;
const TWO_32 = 4294967296;

type Line = (buf: Buffer, start: number, end: number, offset: number) => void;

/** Calls `line` for each non-empty line of `file` with its bytes' bounds in `buf` and the file offset of buf[0]. */
async function eachLine(file: string, line: Line): Promise<void> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(CHUNK);
    let held = 0; // a line cut by the last read, moved to buf's start
    let base = 0; // the file offset of buf[0]
    for (;;) {
      const { bytesRead } = await handle.read(buf, held, CHUNK - held, null);
      const end = held + bytesRead;
      let start = 0;
      for (let i = buf.indexOf(NL, 0); i !== -1 && i < end; i = buf.indexOf(NL, start)) {
        if (i > start) line(buf, start, i, base);
        start = i + 1;
      }
      if (bytesRead === 0) {
        if (end > start) line(buf, start, end, base);
        return;
      }
      if (start === 0 && end === CHUNK) throw new Error(`${file}: a line longer than ${CHUNK} bytes at byte ${base}`);
      buf.copy(buf, 0, start, end);
      held = end - start;
      base += start;
    }
  } finally {
    await handle.close();
  }
}

/**
 * A parser of "first,last,CC" lines into arrays made by make(n) once the lines are counted; each
 * line's numbers arrive as four 32-bit limbs (low first).
 */
interface Ranges<R> {
  result: R;
  range(i: number, first: Float64Array, last: Float64Array, cc: number): void;
}

async function parseFile<R>(file: string, make: (n: number) => Ranges<R>): Promise<R> {
  let n = 0;
  await eachLine(file, () => n++);
  const arrays = make(n);
  const first = new Float64Array(4);
  const last = new Float64Array(4);
  let k = 0;
  // The line being parsed: its bytes are buf[pos..end), buf[0] is at the file's byte base.
  let buf: Buffer;
  let pos = 0;
  let end = 0;
  let base = 0;
  const fail = (what: string): never => {
    throw new Error(`${file}: ${what} at byte ${base + pos}`);
  };
  const num = (limbs: Float64Array) => {
    limbs.fill(0);
    const from = pos;
    for (; pos < end && buf[pos] !== COMMA; pos++) {
      const d = buf[pos] - ZERO;
      if (d < 0 || d > 9) fail('a digit expected');
      let carry = d;
      for (let j = 0; j < 4; j++) {
        const v = limbs[j] * 10 + carry;
        carry = Math.floor(v / TWO_32);
        limbs[j] = v - carry * TWO_32;
      }
      if (carry) fail('a number over 128 bits');
    }
    if (pos === from || pos === end) fail('a number and a comma expected');
    pos++;
  };
  await eachLine(file, (b, start, stop, offset) => {
    buf = b;
    pos = start;
    end = stop;
    base = offset;
    num(first);
    num(last);
    const x = buf[pos];
    const y = buf[pos + 1];
    if (!(pos + 1 < end && x >= 65 && x <= 90 && y >= 65 && y <= 90)) fail('a two-letter country expected');
    for (pos += 2; pos < end; pos++) if (buf[pos] > 32) fail('the line to end after its country');
    arrays.range(k++, first, last, (x << 8) | y);
  });
  return arrays.result;
}

/** The file's n-th range (blank lines not counted) breaks the order lookups rely on. */
const disorder = (file: string, i: number) =>
  new Error(`${file}: range ${i + 1} starts before the range before it, or ends before it starts`);

const v4Ranges = async (file: string): Promise<V4> => {
  const lines = await parseFile(file, (n) => {
    const r = { first: new Uint32Array(n), last: new Uint32Array(n), cc: new Uint16Array(n) };
    const small = (limbs: Float64Array) => {
      if (limbs[1] || limbs[2] || limbs[3]) throw new Error(`${file}: an IPv4 number over 32 bits`);
      return limbs[0];
    };
    return {
      result: r,
      range(i, first, last, cc) {
        r.first[i] = small(first);
        r.last[i] = small(last);
        r.cc[i] = cc;
      },
    };
  });
  const { first, last, cc } = lines;
  const n = cc.length;
  // Range i makes an entry unless the next one starts where it does; a gap follows it when the
  // next one starts more than one address after its end.
  const shadowed = (i: number) => i + 1 < n && first[i + 1] === first[i];
  const gapAfter = (i: number) => (i + 1 < n ? first[i + 1] > last[i] + 1 : last[i] < 0xffffffff);
  let entries = 0;
  for (let i = 0; i < n; i++) {
    if (first[i] > last[i] || (i > 0 && first[i] < first[i - 1])) throw disorder(file, i);
    if (!shadowed(i)) entries += gapAfter(i) ? 2 : 1;
  }
  const out = { first: new Uint32Array(entries), cc: new Uint16Array(entries) };
  for (let i = 0, k = 0; i < n; i++) {
    if (shadowed(i)) continue;
    out.first[k] = first[i];
    out.cc[k++] = cc[i];
    if (gapAfter(i)) out.first[k++] = last[i] + 1; // cc 0: a gap
  }
  return out;
};

const HALF = (1n << 64n) - 1n;

const v6Ranges = async (file: string): Promise<V6> => {
  const lines = await parseFile(file, (n) => {
    const r = {
      firstHi: new BigUint64Array(n),
      firstLo: new BigUint64Array(n),
      lastHi: new BigUint64Array(n),
      lastLo: new BigUint64Array(n),
      cc: new Uint16Array(n),
    };
    const half = (high: number, low: number) => (BigInt(high) << 32n) | BigInt(low);
    return {
      result: r,
      range(i, first, last, cc) {
        r.firstHi[i] = half(first[3], first[2]);
        r.firstLo[i] = half(first[1], first[0]);
        r.lastHi[i] = half(last[3], last[2]);
        r.lastLo[i] = half(last[1], last[0]);
        r.cc[i] = cc;
      },
    };
  });
  const { firstHi, firstLo, lastHi, lastLo, cc } = lines;
  const n = cc.length;
  const below = (aHi: bigint, aLo: bigint, bHi: bigint, bLo: bigint) => aHi < bHi || (aHi === bHi && aLo < bLo);
  // The address after range i's last as [hi, lo]; null after the family's last address.
  const after = (i: number): [bigint, bigint] | null =>
    lastLo[i] !== HALF ? [lastHi[i], lastLo[i] + 1n] : lastHi[i] !== HALF ? [lastHi[i] + 1n, 0n] : null;
  const shadowed = (i: number) => i + 1 < n && firstHi[i + 1] === firstHi[i] && firstLo[i + 1] === firstLo[i];
  const gapAt = (i: number) => {
    const next = after(i);
    return next !== null && (i + 1 === n || below(next[0], next[1], firstHi[i + 1], firstLo[i + 1])) ? next : null;
  };
  let entries = 0;
  for (let i = 0; i < n; i++) {
    if (below(lastHi[i], lastLo[i], firstHi[i], firstLo[i])) throw disorder(file, i);
    if (i > 0 && below(firstHi[i], firstLo[i], firstHi[i - 1], firstLo[i - 1])) throw disorder(file, i);
    if (!shadowed(i)) entries += gapAt(i) ? 2 : 1;
  }
  const out = {
    firstHi: new BigUint64Array(entries),
    firstLo: new BigUint64Array(entries),
    cc: new Uint16Array(entries),
  };
  for (let i = 0, k = 0; i < n; i++) {
    if (shadowed(i)) continue;
    out.firstHi[k] = firstHi[i];
    out.firstLo[k] = firstLo[i];
    out.cc[k++] = cc[i];
    const gap = gapAt(i);
    if (gap) {
      out.firstHi[k] = gap[0]; // cc 0: a gap
      out.firstLo[k++] = gap[1];
    }
  }
  return out;
};

/** Ranges from two "-num" CSV files (sorted by first address, as the package ships them). */
export async function loadRanges(v4File: string, v6File: string): Promise<CountryRanges> {
  return { v4: await v4Ranges(v4File), v6: await v6Ranges(v6File) };
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
    const { first, cc } = ranges.v4;
    const i = lastAtOrBelow(first.length, (k) => first[k] <= n);
    return i >= 0 && cc[i] ? country(cc[i]) : null;
  }
  let hi = 0n;
  let lo = 0n;
  for (let k = 0; k < 8; k++) hi = (hi << 8n) | BigInt(bytes[k]);
  for (let k = 8; k < 16; k++) lo = (lo << 8n) | BigInt(bytes[k]);
  const v = ranges.v6;
  const i = lastAtOrBelow(v.cc.length, (k) => v.firstHi[k] < hi || (v.firstHi[k] === hi && v.firstLo[k] <= lo));
  return i >= 0 && v.cc[i] ? country(v.cc[i]) : null;
}
