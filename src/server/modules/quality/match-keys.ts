// What a blocklist entry and a lead are compared by: one text key per value, the same for every
// spelling of it. An entry has one key; a lead has one for each thing it could be blocked by
// (its email, its email's domain and each parent domain, its phone, every CIDR block holding its
// IP, each sub id), and intake looks them all up in one index probe each (queries.ts).
import { createHmac } from 'node:crypto';
import net from 'node:net';
import { domainToASCII } from 'node:url';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { LeadFields } from '../../db/tables.js';
import { emailProblem } from '../intake/validate.js';

export const BLOCK_KINDS = ['email', 'email_domain', 'phone', 'ip', 'sub_id'] as const;
export type BlockKind = (typeof BLOCK_KINDS)[number];

/** An entry's value as shown (normalized) and its key, or what is wrong with it. */
export type EntryKey = { value: string; key: string } | { error: string };

const ASCII_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/** A domain in ASCII (IDNA: "bücher.de" → "xn--bcher-kva.de"), or null when it is not one. */
function asciiDomain(domain: string): string | null {
  const ascii = domainToASCII(domain);
  return ascii && ascii.length <= 253 && ascii.split('.').every((l) => ASCII_LABEL.test(l)) ? ascii : null;
}

// NFKC first, as intake stores emails: full-width and other compatibility forms are one mailbox.
const emailText = (raw: string) => raw.normalize('NFKC').trim().toLowerCase();

function emailKey(email: string): string | null {
  const at = email.lastIndexOf('@');
  const domain = asciiDomain(email.slice(at + 1));
  return domain && `email:${email.slice(0, at)}@${domain}`;
}

function emailEntry(raw: string): EntryKey {
  const email = emailText(raw);
  const problem = emailProblem(email);
  const key = problem ? null : emailKey(email);
  return key ? { value: email, key } : { error: problem ?? 'has a domain that is not valid' };
}

function domainEntry(raw: string): EntryKey {
  const domain = emailText(raw).replace(/^(@|\*\.)/, '');
  const ascii = asciiDomain(domain);
  return ascii
    ? { value: domain, key: `domain:${ascii}` }
    : { error: 'is not a domain name (e.g. example.com; it also blocks its subdomains)' };
}

function phoneEntry(raw: string): EntryKey {
  const parsed = parsePhoneNumberFromString(raw.normalize('NFKC').trim());
  if (!parsed) return { error: 'is not a phone number in international format (+ and the country code)' };
  if (!parsed.isValid())
    return { error: `is not a valid phone number${parsed.country ? ` for ${parsed.country}` : ''}` };
  return { value: parsed.number, key: `phone:${parsed.number}` };
}

/** An address's bytes (4 for IPv4 and IPv4-mapped IPv6, else 16), or null when it is not one. */
function ipBytes(text: string): number[] | null {
  const family = net.isIP(text);
  if (family === 4) return text.split('.').map(Number);
  if (family !== 6 || text.includes('%')) return null;
  let s = text;
  let tail: number[] = [];
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (v4) {
    tail = v4.slice(1).map(Number);
    s = s.slice(0, -v4[0].length);
    if (s.endsWith(':') && !s.endsWith('::')) s = s.slice(0, -1);
  }
  const [head, rest] = s.split('::');
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const r = groups(rest);
  const gap = rest === undefined ? 0 : 8 - h.length - r.length - tail.length / 2;
  const bytes = [...h, ...new Array<number>(gap).fill(0), ...r].flatMap((g) => [g >> 8, g & 0xff]).concat(tail);
  const mapped = bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
  return mapped ? bytes.slice(12) : bytes;
}

const hexOf = (bytes: number[]) => bytes.map((b) => b.toString(16).padStart(2, '0')).join('');

function ipText(bytes: number[]): string {
  if (bytes.length === 4) return bytes.join('.');
  const groups = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] << 8) | bytes[i + 1]).toString(16));
  return new net.SocketAddress({ address: groups.join(':'), family: 'ipv6' }).address;
}

/** The first `len` bits of a hex address, the rest zero: the key of the block of that length. */
function maskedHex(hex: string, len: number): string {
  const whole = len >> 2;
  const part = len & 3;
  let out = hex.slice(0, whole);
  if (part) out += (parseInt(hex[whole], 16) & (0xf0 >> part) & 0xf).toString(16);
  return out.padEnd(hex.length, '0');
}

const ipKey = (hex: string, len: number) => `ip${hex.length === 8 ? 4 : 6}:${maskedHex(hex, len)}/${len}`;

function ipEntry(raw: string): EntryKey {
  const text = raw.trim();
  const slash = text.indexOf('/');
  const bytes = ipBytes(slash < 0 ? text : text.slice(0, slash));
  if (!bytes) return { error: 'is not an IPv4 or IPv6 address or CIDR block (e.g. 203.0.113.7 or 203.0.113.0/24)' };
  const bits = bytes.length * 8;
  let len = bits;
  if (slash >= 0) {
    const prefix = text.slice(slash + 1);
    // An IPv4-mapped IPv6 block (::ffff:10.0.0.0/104) is the IPv4 block it maps.
    const given = /^\d{1,3}$/.test(prefix) ? Number(prefix) - (bits === 32 && text.includes(':') ? 96 : 0) : -1;
    if (given < 0 || given > bits) return { error: `has a prefix length that is not 0–${bits}` };
    len = given;
  }
  const hex = hexOf(bytes);
  const network = maskedHex(hex, len);
  if (network !== hex) {
    const block = ipText(network.match(/../g)!.map((b) => parseInt(b, 16)));
    return { error: `has address bits set past its /${len} prefix: the block is ${block}/${len}` };
  }
  return { value: len === bits ? ipText(bytes) : `${ipText(bytes)}/${len}`, key: ipKey(hex, len) };
}

function subIdEntry(raw: string): EntryKey {
  const value = raw.trim();
  if (!value) return { error: 'must not be empty' };
  if (value.length > 500) return { error: 'must be at most 500 characters (as a sub id is)' };
  return { value, key: `sub:${value}` };
}

const ENTRY: Record<BlockKind, (raw: string) => EntryKey> = {
  email: emailEntry,
  email_domain: domainEntry,
  phone: phoneEntry,
  ip: ipEntry,
  sub_id: subIdEntry,
};

/**
 * How an email or a phone key is stored and probed: "email#" / "phone#" and the HMAC-SHA256 of
 * the clear key under the install's key (match-secret.ts), base64url. The other kinds' keys are
 * not contacts and stay as they are (an IP block's key must keep its prefix for its shape).
 */
export function protectKey(key: string, secret: Buffer): string {
  const kind = key.startsWith('email:') ? 'email' : key.startsWith('phone:') ? 'phone' : null;
  return kind ? `${kind}#${createHmac('sha256', secret).update(key).digest('base64url')}` : key;
}

/** A blocklist entry's value, normalized, and its key. */
export const entryKey = (kind: BlockKind, raw: string): EntryKey => ENTRY[kind](raw);

type KeyedLead = Pick<LeadFields, 'email' | 'phone' | 'ip' | 'sub_id1' | 'sub_id2' | 'sub_id3' | 'sub_id4' | 'sub_id5'>;

/** An entry's shape (blocklist-shapes.ts): its kind, or for an IP block its family and prefix length. */
export function shapeOf(kind: BlockKind, key: string): string {
  if (kind !== 'ip') return kind;
  return `${key.slice(0, 3)}/${key.slice(key.lastIndexOf('/') + 1)}`;
}

/**
 * Every key a lead (as intake stores it: normalized) can be blocked by; with `shapes` (the
 * shapes the lists hold), only those of these shapes: no other key can match. With `secret`,
 * the email and phone keys as stored (protectKey).
 */
export function leadKeys(lead: KeyedLead, shapes?: ReadonlySet<string>, secret?: Buffer): string[] {
  const keys: string[] = [];
  const has = (shape: string) => !shapes || shapes.has(shape);
  const email = has('email') || has('email_domain') ? emailKey(emailText(lead.email)) : null;
  if (email) {
    if (has('email')) keys.push(secret ? protectKey(email, secret) : email);
    if (has('email_domain')) {
      const labels = email.slice(email.lastIndexOf('@') + 1).split('.');
      for (let i = 0; i < labels.length; i++) keys.push(`domain:${labels.slice(i).join('.')}`);
    }
  }
  if (has('phone')) keys.push(secret ? protectKey(`phone:${lead.phone}`, secret) : `phone:${lead.phone}`);
  const bytes = !shapes || [...shapes].some((s) => s.startsWith('ip')) ? ipBytes(lead.ip) : null;
  if (bytes) {
    const hex = hexOf(bytes);
    const family = bytes.length === 4 ? 'ip4' : 'ip6';
    for (let len = 0; len <= bytes.length * 8; len++) if (has(`${family}/${len}`)) keys.push(ipKey(hex, len));
  }
  if (has('sub_id'))
    for (const sub of new Set([lead.sub_id1, lead.sub_id2, lead.sub_id3, lead.sub_id4, lead.sub_id5]))
      if (sub) keys.push(`sub:${sub}`);
  return keys;
}
