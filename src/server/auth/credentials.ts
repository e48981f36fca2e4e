import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

// Token format shared by API keys (lg_), sessions (lgs_), intake tokens (lgt_), partner
// postback tokens (lgp_), and a traffic provider's portal: its users' sessions (lgps_), their API
// keys (lgpk_) and invitations (lgi_):
//   <prefix><id:12><secret:32><checksum:6>, all base62.
// The id is a non-secret lookup key (shown as the key's prefix); the secret carries ~190 bits
// of entropy; the checksum (CRC-32 of prefix+id+secret) lets a malformed or mistyped token be
// refused without a database query, and lets secret scanners match `lg_[0-9A-Za-z]{50}` with
// few false positives. Only SHA-256(secret) is stored: with this much entropy a slow hash
// adds nothing, and auth stays one indexed lookup per request.

export type TokenKind = 'lg_' | 'lgs_' | 'lgt_' | 'lgp_' | 'lgps_' | 'lgpk_' | 'lgi_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ID_LEN = 12;
const SECRET_LEN = 32;
const CHECK_LEN = 6;
export const TOKEN_BODY_LEN = ID_LEN + SECRET_LEN + CHECK_LEN;

function randomBase62(len: number): string {
  let out = '';
  while (out.length < len) {
    for (const byte of randomBytes(len * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62]; // 248 = 4*62: no modulo bias
      if (out.length === len) break;
    }
  }
  return out;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(s: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < s.length; i++) c = CRC_TABLE[(c ^ s.charCodeAt(i)) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function checksum(s: string): string {
  let n = crc32(s);
  let out = '';
  for (let i = 0; i < CHECK_LEN; i++) {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export interface IssuedToken {
  id: string;
  token: string;
  secretHash: string;
}

export function issueToken(kind: TokenKind): IssuedToken {
  const id = randomBase62(ID_LEN);
  const secret = randomBase62(SECRET_LEN);
  const body = kind + id + secret;
  return { id, token: body + checksum(body), secretHash: hashSecret(secret) };
}

export interface ParsedToken {
  kind: TokenKind;
  id: string;
  secret: string;
}

const TOKEN_RE = /^(lg_|lgs_|lgt_|lgp_|lgps_|lgpk_|lgi_)([0-9A-Za-z]{12})([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

/** Structure and checksum only; no database. Returns null for anything malformed. */
export function parseToken(token: string): ParsedToken | null {
  const m = TOKEN_RE.exec(token);
  if (!m) return null;
  const [, kind, id, secret, check] = m;
  if (checksum(kind + id + secret) !== check) return null;
  return { kind: kind as TokenKind, id, secret };
}

// crypto.hash: the one-shot form, a quarter of createHash's cost (it runs on every request).
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

export function secretMatches(secret: string, storedHash: string): boolean {
  const a = hash('sha256', secret, 'buffer');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

export const displayPrefix = (kind: TokenKind, id: string) => kind + id;

/** An API key's state (operators' and portal keys alike): revoked, past its expiry, or active. */
export function keyStatus(k: { revoked_at: string | null; expires_at: string | null }, now = Date.now()) {
  if (k.revoked_at) return 'revoked' as const;
  if (k.expires_at && Date.parse(k.expires_at) <= now) return 'expired' as const;
  return 'active' as const;
}
