// An RFC 5322 message of plain UTF-8 text. Every header value is built here from plain values:
// control characters (CR and LF among them) are taken out first, so no name or subject can add a
// header; non-ASCII words are RFC 2047 encoded-words; the body is 7bit when it is short ASCII
// lines, else base64.
import { randomBytes } from 'node:crypto';

export interface MailAddress {
  name: string | null;
  /** ASCII (checked by the SMTP client, which refuses anything else). */
  address: string;
}

export interface MailMessage {
  from: MailAddress;
  to: MailAddress;
  subject: string;
  text: string;
}

/** One line: every control character (CR, LF, TAB, NUL…) becomes a space, runs of spaces one. */
export const headerText = (value: string) =>
  value
    .replace(/[\x00-\x1f\x7f\u0085\u2028\u2029]/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();

const isAscii = (s: string) => /^[\x20-\x7e]*$/.test(s);

/** RFC 2047 encoded-words of at most 75 characters, whole characters in each, joined by folding. */
function encodedWords(text: string): string {
  const words: string[] = [];
  let chunk = '';
  for (const ch of text) {
    if (Buffer.byteLength(chunk + ch) > 45) (words.push(chunk), (chunk = ''));
    chunk += ch;
  }
  if (chunk) words.push(chunk);
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w).toString('base64')}?=`).join('\r\n ');
}

/** An unstructured header value (Subject). */
const unstructured = (value: string) => {
  const text = headerText(value);
  return isAscii(text) && text.length <= 900 ? text : encodedWords(text);
};

/** A mailbox: "Name" <address>, the name quoted (ASCII) or encoded (anything else). */
export function mailbox({ name, address }: MailAddress): string {
  const display = name ? headerText(name) : '';
  if (!display) return `<${address}>`;
  const phrase = isAscii(display) ? `"${display.replace(/["\\]/g, '\\$&')}"` : encodedWords(display);
  return `${phrase} <${address}>`;
}

/** RFC 5322 date-time in UTC: "Fri, 27 Nov 2026 02:14:12 +0000". */
export const rfc5322Date = (d: Date) => d.toUTCString().replace(/GMT$/, '+0000');

function body(text: string): { encoding: string; lines: string } {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.every((l) => isAscii(l) && l.length <= 900)) return { encoding: '7bit', lines: lines.join('\r\n') };
  const b64 = Buffer.from(lines.join('\r\n'), 'utf8').toString('base64');
  return { encoding: 'base64', lines: b64.replace(/.{76}/g, '$&\r\n').replace(/\r\n$/, '') };
}

/** The message as SMTP's DATA sends it (CRLF line ends, not yet dot-stuffed). */
export function buildMessage(m: MailMessage, date = new Date()): string {
  const domain = m.from.address.split('@')[1];
  const { encoding, lines } = body(m.text);
  const headers = [
    `Date: ${rfc5322Date(date)}`,
    `Message-ID: <${randomBytes(16).toString('hex')}@${domain}>`,
    `From: ${mailbox(m.from)}`,
    `To: ${mailbox(m.to)}`,
    `Subject: ${unstructured(m.subject)}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    `Content-Transfer-Encoding: ${encoding}`,
  ];
  return `${headers.join('\r\n')}\r\n\r\n${lines}\r\n`;
}
