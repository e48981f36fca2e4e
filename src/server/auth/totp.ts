import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Time-based one-time passwords (RFC 6238 over RFC 4226 HOTP): HMAC-SHA1, 30-second steps,
// 6 digits — what every authenticator app speaks by default. No dependency: it is a dozen lines
// over node:crypto, and the RFC's test vectors pin it down (see totp.test.ts).

export const STEP_SECONDS = 30;
export const DIGITS = 6;
/** Codes from one step either side are accepted too: clocks drift and people type slowly. */
export const WINDOW = 1;

const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** RFC 4648 base32, upper case, without padding (what otpauth:// URIs carry). */
export function base32Encode(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = ((value << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += B32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += B32[(value << (5 - bits)) & 31];
  return out;
}

/** Accepts lower case, spaces and padding, as people copy secrets around; null if not base32. */
export function base32Decode(text: string): Buffer | null {
  const clean = text.replace(/[\s=]/g, '').toUpperCase();
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const v = B32.indexOf(ch);
    if (v < 0) return null;
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new seed: 160 bits, the HMAC-SHA1 key length RFC 4226 recommends. */
export const newSecret = () => base32Encode(randomBytes(20));

export const stepAt = (ms: number) => Math.floor(ms / 1000 / STEP_SECONDS);

/** HOTP (RFC 4226 §5.3) for one counter value, as a zero-padded string of `digits`. */
export function hotp(
  key: Buffer,
  counter: number,
  digits = DIGITS,
  algorithm: 'sha1' | 'sha256' | 'sha512' = 'sha1',
): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(msg).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const binary = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, '0');
}

/** The code for the step containing `ms`. */
export function totpAt(secret: string, ms: number): string {
  const key = base32Decode(secret);
  if (!key) throw new Error('TOTP secret is not base32');
  return hotp(key, stepAt(ms));
}

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/**
 * The step a code matches within ±WINDOW of `ms`, or null. The caller stores the step and
 * refuses any later code whose step is not newer, so one code signs in once.
 */
export function matchStep(secret: string, code: string, ms = Date.now()): number | null {
  const key = base32Decode(secret);
  if (!key || !/^\d{6}$/.test(code)) return null;
  const now = stepAt(ms);
  let found: number | null = null;
  // Every candidate is computed and compared, so timing says nothing about which one matched.
  for (let step = now - WINDOW; step <= now + WINDOW; step++) {
    if (same(hotp(key, step), code) && found === null) found = step;
  }
  return found;
}

/** The otpauth:// URI authenticator apps read from the QR code (Key Uri Format). */
export function otpauthUri(secret: string, account: string, issuer = 'Leadgate'): string {
  const label = encodeURIComponent(`${issuer}:${account}`);
  const q = new URLSearchParams({
    secret,
    issuer,
    algorithm: 'SHA1',
    digits: String(DIGITS),
    period: String(STEP_SECONDS),
  });
  return `otpauth://totp/${label}?${q.toString()}`;
}
