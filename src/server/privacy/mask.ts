// Contact masking for callers without leads:contacts. Enough stays visible to tell leads apart
// (first letter and domain, country prefix and last two digits), never enough to reach them.
import { getCountries, getCountryCallingCode } from 'libphonenumber-js/max';

/** "john.doe@example.com" → "j***@example.com". */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${[...email.slice(0, at)][0]}***${email.slice(at)}`;
}

/** "+4915123456767" → "+49*********67": the first three and last two characters stay. */
export function maskPhone(phone: string): string {
  if (phone.length < 8) return '*'.repeat(phone.length);
  return phone.slice(0, 3) + '*'.repeat(phone.length - 5) + phone.slice(-2);
}

/** Hides one lead's email and phone in a text; made once per lead (see contactMasker). */
export type Masker = (text: string) => string;

// Masking runs on every text field of every row a search page or an export sends, so nothing
// here is compiled per lead: a few fixed patterns find where an email or a phone could be, and
// the lead's own email and digits (worked out once per lead) are compared with what they find.

/** Where an email could be: "@" in any spelling (as is, %-encoded once or twice, JSON/JS escape, HTML reference). */
const AT_ANYWHERE = /@|%(?:25)*40|\\+(?:u0040|x40)|&#(?:0*64|x0*40);|&commat;/i;
const PCT = /%(?:25)*([0-9a-f]{2})/iy;
const BACKSLASH = /\\+(?:u([0-9a-f]{4})|x([0-9a-f]{2})|(\/))/iy;
const REF = /&(?:#(?:x([0-9a-f]{1,6})|(\d{1,7}))|(commat|period|plus|hyphen|nbsp));/iy;
const NAMED: Record<string, string> = { commat: '@', period: '.', plus: '+', hyphen: '-', nbsp: ' ' };
const utf8 = new TextDecoder();

const SPECIAL = /[%\\&]/g;

/** One encoded character at `i` (%-bytes, a backslash escape, an HTML reference): what it stands for, and where it ends. */
function tokenAt(src: string, i: number): { text: string; end: number } | null {
  const c = src.charCodeAt(i);
  if (c === 0x25 /* % */) {
    // A run of %-encoded bytes with any byte above 0x7f is one piece of UTF-8 ("ö" is two bytes).
    PCT.lastIndex = i;
    let m = PCT.exec(src);
    if (!m) return null;
    const first = parseInt(m[1], 16);
    if (first < 0x80) return { text: String.fromCharCode(first), end: PCT.lastIndex };
    const bytes = [first];
    let end = PCT.lastIndex;
    while ((m = PCT.exec(src)) && parseInt(m[1], 16) >= 0x80) (bytes.push(parseInt(m[1], 16)), (end = PCT.lastIndex));
    return { text: utf8.decode(Uint8Array.from(bytes)), end };
  }
  if (c === 0x5c /* \ */) {
    BACKSLASH.lastIndex = i;
    const m = BACKSLASH.exec(src);
    return m ? { text: m[3] ?? String.fromCharCode(parseInt(m[1] ?? m[2], 16)), end: BACKSLASH.lastIndex } : null;
  }
  REF.lastIndex = i;
  const m = REF.exec(src);
  const cp = m ? (m[3] ? NAMED[m[3].toLowerCase()].codePointAt(0)! : parseInt(m[1] ?? m[2], m[1] ? 16 : 10)) : NaN;
  return m && cp <= 0x10ffff ? { text: String.fromCodePoint(cp), end: REF.lastIndex } : null;
}

/**
 * The text as a reader would see it, lower-cased, with %-encoding (also twice), JSON/JS escapes
 * and HTML character references resolved, and for any position in it the span of the original
 * text it came from, so a find in the decoded text masks exactly that span of the original.
 * Kept as segments (a plain stretch maps one to one; an encoded character maps to all of its
 * spelling), so plain text costs one toLowerCase and a slice, not work per character.
 */
function decodeForSearch(src: string) {
  const parts: string[] = [];
  const segAt: number[] = []; // where each segment starts in the decoded text
  const segSrc: number[] = []; // and in the original
  const segEnd: number[] = []; // -1: plain, one to one; else where its spelling ends in the original
  let length = 0;
  const add = (text: string, from: number, to: number, plain: boolean) => {
    (segAt.push(length), segSrc.push(from), segEnd.push(plain ? -1 : to), parts.push(text));
    length += text.length;
  };
  let i = 0;
  while (i < src.length) {
    SPECIAL.lastIndex = i;
    const j = SPECIAL.exec(src)?.index ?? src.length;
    if (j > i) {
      const plain = src.slice(i, j);
      const low = plain.toLowerCase();
      // A few characters lower-case to two ("İ"): then character by character.
      if (low.length === plain.length) add(low, i, j, true);
      else for (let k = i; k < j; k++) add(src[k].toLowerCase(), k, k + 1, false);
      i = j;
    }
    if (i >= src.length) break;
    const token = tokenAt(src, i);
    if (token) (add(token.text.toLowerCase(), i, token.end, false), (i = token.end));
    else (add(src[i], i, i + 1, true), i++);
  }
  const segOf = (pos: number) => {
    let lo = 0;
    let hi = segAt.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (segAt[mid] <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  return {
    text: parts.join(''),
    startOf(pos: number) {
      const k = segOf(pos);
      return segEnd[k] < 0 ? segSrc[k] + pos - segAt[k] : segSrc[k];
    },
    endOf(pos: number) {
      const k = segOf(pos);
      return segEnd[k] < 0 ? segSrc[k] + pos - segAt[k] + 1 : segEnd[k];
    },
  };
}

/** Every spelling of `email` (lower case) in `src` replaced by `masked`. */
function maskEmailIn(src: string, email: string, masked: string): string {
  if (!AT_ANYWHERE.test(src)) return src;
  // Nothing encoded, and lower case keeps every position: the plain text is its own map.
  const low = /[%\\&]/.test(src) ? null : src.toLowerCase();
  const d =
    low !== null && low.length === src.length
      ? { text: low, startOf: (i: number) => i, endOf: (i: number) => i + 1 }
      : decodeForSearch(src);
  let at = d.text.indexOf(email);
  if (at < 0) return src;
  let out = '';
  let done = 0;
  for (; at >= 0; at = d.text.indexOf(email, at + email.length)) {
    const from = d.startOf(at);
    if (from < done) continue;
    out += src.slice(done, from) + masked;
    done = d.endOf(at + email.length - 1);
  }
  return out + src.slice(done);
}

/** Every spelling of "+": as is, %-encoded (also twice), JSON escape, HTML reference. */
const PLUS = String.raw`(?:\+|%(?:25)*2B|\\+u002B|&#0*43;|&#x0*2B;|&plus;)`;
/** What people and encoders put between digit groups: spaces (also as "+" or %20), dots, dashes, slashes, brackets. */
const SEP = String.raw`(?:[\s./()-]|%(?:25)*(?:20|2D|2F|28|29|2E)|\+|&nbsp;|&#0*160;)`;
/** A number as written: an optional "+", then digits with up to three separators between any two. */
const DIGIT_RUN = new RegExp(String.raw`${PLUS}?\d(?:${SEP}{0,3}\d)*`, 'gi');
const PLUS_AT_START = new RegExp(`^${PLUS}`, 'i');
/** Encoded characters inside a run, whose digits are not the number's ("%20"). */
const ENCODED = /%(?:25)*[0-9a-f]{2}|\\+u[0-9a-f]{4}|&#x?[0-9a-f]+;|&[a-z]+;/gi;

/** ITU country calling codes (1 to 3 digits), by length then value. */
const CALLING_CODES = [new Uint8Array(10), new Uint8Array(100), new Uint8Array(1000)];
for (const country of getCountries()) {
  const cc = getCountryCallingCode(country);
  CALLING_CODES[cc.length - 1][Number(cc)] = 1;
}

/** The calling code a number's digits start with; the codes are prefix-free, so there is at most one. */
function callingCodeLength(digits: string): number {
  let value = 0;
  for (let n = 1; n <= 3 && n <= digits.length; n++) {
    value = value * 10 + digits.charCodeAt(n - 1) - 48;
    if (CALLING_CODES[n - 1][value]) return n;
  }
  return 0;
}

/**
 * The digits that mark the phone wherever it is written: its national number, which every
 * notation contains (E.164 with or without "+" or "00", the country code set apart, national
 * with a trunk "0"), however it is grouped. A national number of fewer than 6 digits would
 * match unrelated numbers: then all of its digits.
 */
function phoneCore(phone: string): string | null {
  const digits = phone.replace(/\D/g, '');
  if (digits.length < 6) return null;
  const national = digits.slice(callingCodeLength(digits));
  return national.length >= 6 && national.length < digits.length ? national : digits;
}

const keep: Masker = (text) => text;
const MAY_HOLD_CONTACT = /[\d@%\\&]/;

/**
 * One lead's masker: every spelling of its email and phone in a text becomes the masked form
 * (maskEmail; maskPhone, with "+" as the text spelled it, or none when it had none). A number
 * is masked as its whole run of digits and separators, so no prefix or group of it survives.
 */
export function contactMasker(lead: { email: string; phone: string }): Masker {
  const email = lead.email.trim().toLowerCase();
  const checkEmail = email.length >= 4 && email.includes('@');
  const core = phoneCore(lead.phone);
  if (!checkEmail && !core) return keep;
  // The masked forms are only needed where something is found, which most texts are not.
  let maskedEmail: string | undefined;
  let maskedDigits: string | undefined;
  const maskRun = (run: string) => {
    if (run.length < core!.length || !run.replace(ENCODED, ' ').replace(/\D/g, '').includes(core!)) return run;
    maskedDigits ??= maskPhone(lead.phone).replace(/^\+/, '');
    const plus = PLUS_AT_START.exec(run);
    return plus ? plus[0] + maskedDigits : maskedDigits;
  };
  return (text) => {
    // Neither a digit nor a spelling of "@" (names, most sub ids): nothing to look for.
    if (!text || !MAY_HOLD_CONTACT.test(text)) return text;
    // The email first: once masked, no digit of its local part is left for a phone to match.
    const out = checkEmail ? maskEmailIn(text, email, (maskedEmail ??= maskEmail(lead.email.trim()))) : text;
    return core ? out.replace(DIGIT_RUN, maskRun) : out;
  };
}

/** Masks one text for one lead; where many texts of one lead are masked, make contactMasker once. */
export function maskInText(text: string, lead: { email: string; phone: string }): string {
  return contactMasker(lead)(text);
}

/** A copy of a JSON-like value (objects, arrays) with every string in it masked. */
export function maskDeep(value: unknown, mask: Masker): unknown {
  if (typeof value === 'string') return mask(value);
  if (Array.isArray(value)) return value.map((v) => maskDeep(v, mask));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, maskDeep(v, mask)]));
  }
  return value;
}

const ANY_EMAIL = /[^\s"'<>,;:()[\]{}]+(?:@|%(?:25)*40)[^\s"'<>,;:()[\]{}]+/gi;
const ANY_PHONE = new RegExp(String.raw`${PLUS}?\d(?:${SEP}{0,3}\d){5,}`, 'gi');

/**
 * For text that belongs to no one lead (the search an export was made with): anything shaped
 * like an email address, or a number of 6 digits or more, is masked.
 */
export function maskContactLike(text: string): string {
  return text
    .replace(ANY_EMAIL, (m) => maskEmail(decodeForSearch(m).text))
    .replace(ANY_PHONE, (m) => {
      const digits = m.replace(ENCODED, ' ').replace(/\D/g, '');
      return PLUS_AT_START.test(m) ? maskPhone(`+${digits}`) : maskPhone(digits);
    });
}

/**
 * For text that many leads share (a partner's refusal reasons summed up in a report): every
 * email-shaped word becomes {email} and every number of 6 digits or more {number}, so "email
 * a@b.c exists" and "email d@e.f exists" are one reason, and no lead's contact shows.
 */
export function contactPlaceholders(text: string): string {
  return text.replace(ANY_EMAIL, '{email}').replace(ANY_PHONE, '{number}');
}

/** A whole id (UUID) or date, hour or timestamp ("2026-11-26", "2026-11-26T13", ISO 8601): ours, never a contact. */
const STRUCTURED =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d{2}-\d{2}(?:T[\d:.]+Z?)?)$/i;

/**
 * maskContactLike for the texts of a record that mixes free text with ids and times (an event's
 * data, an audit entry's details): a whole id or timestamp is left as it is, since its digit
 * groups would read as a phone number.
 */
export const maskFreeText: Masker = (text) => (STRUCTURED.test(text) ? text : maskContactLike(text));
