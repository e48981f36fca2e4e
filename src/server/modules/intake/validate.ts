import { createHash } from 'node:crypto';
import net from 'node:net';
import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { LeadFields } from '../../db/tables.js';
import type { PhoneFacts } from '../quality/flags.js';
import { countryProblem } from '../../http/countries.js';
import { toProblem, type FieldError } from '../../http/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from './schemas.js';

/** A lead as stored: trimmed, email NFKC and lower-cased, phone E.164, country upper case, IP canonical. */
export type NormalizedLead = LeadFields;

export interface IntakeInput {
  lead: NormalizedLead;
  /** As sent; null: the provider's only active campaign. */
  campaignId: string | null;
  idempotencyKey: string | null;
  /** What validation's parse of the phone found, for the fraud flags (quality/flags.ts) to reuse. */
  phoneFacts?: PhoneFacts;
}

const OPTIONAL_FIELDS = ['language', 'funnel', 'sub_id1', 'sub_id2', 'sub_id3', 'sub_id4', 'sub_id5'] as const;
const KEY_RE = new RegExp(IDEMPOTENCY_KEY_PATTERN);

// Deliberately plain: one @, a local part without spaces or the characters that need quoting,
// and a domain of at least two labels (Unicode letters allowed: internationalized domains).
const LOCAL_RE = /^[^\s@"(),:;<>[\]\\]{1,64}$/u;
const LABEL_RE = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

export function emailProblem(email: string): string | null {
  const at = email.lastIndexOf('@');
  const local = email.slice(0, at);
  const labels = email.slice(at + 1).split('.');
  const ok =
    at > 0 &&
    LOCAL_RE.test(local) &&
    !local.startsWith('.') &&
    !local.endsWith('.') &&
    !local.includes('..') &&
    labels.length >= 2 &&
    labels.every((l) => LABEL_RE.test(l)) &&
    !/^\d+$/.test(labels[labels.length - 1]);
  return ok ? null : 'is not a valid email address';
}

/** E.164, or an error message; null when the number cannot be judged (a national number without a valid country). */
function phoneOf(raw: string, country: string | null): { e164: string; facts: PhoneFacts } | { error: string } | null {
  const parsed = parsePhoneNumberFromString(raw, (country ?? undefined) as CountryCode | undefined);
  if (!parsed) {
    if (!country && !/^\s*(\+|00)/.test(raw)) return null; // the country error says enough
    return {
      error: country
        ? `is not a phone number (international +… or national format for ${country})`
        : 'is not a phone number',
    };
  }
  if (parsed.ext) return { error: 'must not carry an extension' };
  if (!parsed.isValid())
    return { error: `is not a valid phone number${parsed.country ? ` for ${parsed.country}` : ''}` };
  return { e164: parsed.number, facts: { country: parsed.country ?? null, type: parsed.getType() ?? null } };
}

/** The canonical text of an IP address (IPv4-mapped IPv6 as IPv4), or null when it is not one. */
function ipOf(raw: string): string | null {
  const family = net.isIP(raw);
  if (family === 0 || raw.includes('%')) return null; // a zone id means nothing beyond the lead's own link
  if (family === 4) return raw;
  const canonical = new net.SocketAddress({ address: raw, family: 'ipv6' }).address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(canonical);
  return mapped ? mapped[1] : canonical;
}

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The intake request, checked in full: the schema's errors (types, lengths, unknown fields; the
 * route attaches them instead of answering at once) together with the checks a schema cannot
 * make, so one 400 names every bad field. Campaign rules need the database: see service.ts.
 */
export function readIntake(
  body: unknown,
  schemaError: Error | undefined,
  keyHeader: unknown,
): { input: IntakeInput } | { errors: FieldError[] } {
  const errors: FieldError[] = [];
  const ctx = (schemaError as { validationContext?: string } | undefined)?.validationContext;
  // A header error is found again below, alongside the body's (the schema stops at the first bad part).
  if (schemaError && ctx !== 'headers')
    errors.push(...(toProblem(schemaError as never)?.errors ?? [{ field: 'body', message: schemaError.message }]));

  let idempotencyKey: string | null = null;
  if (keyHeader !== undefined) {
    if (typeof keyHeader === 'string' && KEY_RE.test(keyHeader)) idempotencyKey = keyHeader;
    else errors.push({ field: 'idempotency-key', message: 'must be 1–255 visible ASCII characters (no spaces)' });
  }
  if (!isRecord(body))
    return { errors: errors.length ? errors : [{ field: 'body', message: 'must be a JSON object' }] };

  const named = new Set(errors.map((e) => e.field));
  // A field the schema already refused, or of the wrong type, is not judged again.
  const text = (field: string): string | null => {
    const v = body[field];
    return !named.has(field) && typeof v === 'string' ? v.trim() : null;
  };
  const bad = (field: string, message: string) => errors.push({ field, message });

  // NFKC first: "x@ｅｘａｍｐｌｅ.com" reaches the same mailbox as "x@example.com", so it must be
  // the same lead to the duplicate check (and one stored form); then trim (NFKC can make spaces).
  const email = text('email')?.normalize('NFKC').trim().toLowerCase() ?? null;
  const emailError = email === null ? null : emailProblem(email);
  if (emailError) bad('email', emailError);

  const country = text('country')?.toUpperCase() ?? null;
  const countryError = country === null ? null : countryProblem(country);
  if (countryError) bad('country', countryError);

  // NFKC makes full-width digits and "＋" ASCII: the parser reads full-width digits itself, but
  // not "＋", and took "＋49 151…" for a national number (+4949151…), a different phone.
  const rawPhone = text('phone')?.normalize('NFKC') ?? null;
  const phone = rawPhone === null ? null : phoneOf(rawPhone, country !== null && !countryError ? country : null);
  if (phone && 'error' in phone) bad('phone', phone.error);

  const rawIp = text('ip');
  const ip = rawIp === null ? null : ipOf(rawIp);
  if (rawIp !== null && !ip) bad('ip', 'is not an IPv4 or IPv6 address');

  if (errors.length) return { errors };
  // No error: the schema saw every required field as a string, and every check above passed.
  const optional = (field: (typeof OPTIONAL_FIELDS)[number]) => {
    const v = body[field];
    return typeof v === 'string' && v.trim() ? v.trim() : null;
  };
  const lead: NormalizedLead = {
    first_name: String(body.first_name).trim(),
    last_name: String(body.last_name).trim(),
    email: email!,
    phone: (phone as { e164: string }).e164,
    country: country!,
    ip: ip!,
    language: optional('language'),
    funnel: optional('funnel'),
    sub_id1: optional('sub_id1'),
    sub_id2: optional('sub_id2'),
    sub_id3: optional('sub_id3'),
    sub_id4: optional('sub_id4'),
    sub_id5: optional('sub_id5'),
  };
  const campaignId = typeof body.campaign_id === 'string' ? body.campaign_id : null;
  return { input: { lead, campaignId, idempotencyKey, phoneFacts: (phone as { facts: PhoneFacts }).facts } };
}

/** SHA-256 of the normalized lead and the campaign as sent: equal for a retry of the same lead. */
export function requestHash(input: IntakeInput): string {
  const l = input.lead;
  const canonical = [
    input.campaignId,
    l.first_name,
    l.last_name,
    l.email,
    l.phone,
    l.country,
    l.ip,
    ...OPTIONAL_FIELDS.map((f) => l[f]),
  ];
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}
