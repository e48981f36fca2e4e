// What intake's in-memory quality checks cost per lead (issue 29: each ≤ 1 ms): the fraud flags
// that need no database (flags.ts leadFlags: phone country and type, disposable domain, IP
// country from the shipped database) and the blocklist keys of a lead (match-keys.ts leadKeys:
// about 40 for an IPv4 lead, 140 for IPv6). The database side (one index probe per key, the
// velocity counts) is in the intake benchmark: npm run bench:intake -- --quality full.
//
//   npx tsx bench/quality-checks.ts [--leads 20000]
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { loadShippedRanges, shippedCountryOf } from '../src/server/geo/ip-country.js';
import { leadFlags } from '../src/server/modules/quality/flags.js';
import { leadKeys } from '../src/server/modules/quality/match-keys.js';

const { values } = parseArgs({ options: { leads: { type: 'string', default: '20000' } } });
const N = Math.min(1_000_000, Math.max(1000, Number(values.leads)));

const lead = (n: number, v6: boolean) => ({
  email: `lead.${n}@d${n % 1000}.example.com`,
  phone: n % 3 ? `+49151${String(n).padStart(8, '0')}` : `+3361234${String(n % 10000).padStart(4, '0')}`,
  country: 'DE',
  ip: v6
    ? `2a00:1450:${(n >> 16).toString(16)}::${(n & 0xffff).toString(16)}`
    : `193.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
  sub_id1: `s${n % 50}`,
  sub_id2: null,
  sub_id3: null,
  sub_id4: null,
  sub_id5: null,
});

function time(name: string, fn: (i: number) => unknown) {
  for (let i = 0; i < 2000; i++) fn(i); // warm-up
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(i);
  const us = Number(process.hrtime.bigint() - t0) / 1000 / N;
  console.log(`| ${name} | ${us.toFixed(1)} µs |`);
}

await loadShippedRanges();
console.log(`${os.cpus()[0].model}, ${os.cpus().length} cores, Node ${process.version}; ${N} leads each\n`);
console.log('| Check (per lead) | Time |\n|---|---|');
time('flags without the database (IPv4 lead)', (i) => leadFlags(lead(i, false), shippedCountryOf));
time('flags without the database (IPv6 lead)', (i) => leadFlags(lead(i, true), shippedCountryOf));
time('blocklist keys + JSON (IPv4 lead)', (i) => JSON.stringify(leadKeys(lead(i, false))));
time('blocklist keys + JSON (IPv6 lead)', (i) => JSON.stringify(leadKeys(lead(i, true))));
// As intake builds them: the email and phone keys as HMAC digests (quality/match-secret.ts).
const secret = randomBytes(32);
time('blocklist keys + JSON, email and phone hashed (IPv4 lead)', (i) =>
  JSON.stringify(leadKeys(lead(i, false), undefined, secret)),
);
