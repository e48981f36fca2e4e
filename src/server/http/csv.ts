// CSV cells as every download writes them (lead exports, analytics reports): RFC 4180 quoting and
// a guard against spreadsheet formulas.

/**
 * A phone number as leads carry it ("+49 151 2345678", "+49*********67" masked): a plus, then only
 * digits, spaces, ( ) . / - and the mask's *. A spreadsheet reads it at worst as arithmetic; it
 * names no function and no other program, so it runs nothing and is written as it is (a CRM
 * import gets the number, not "'+49…").
 */
const PHONE_LIKE = /^\+?[0-9][0-9 ()./*-]*$/;

/**
 * One CSV cell (RFC 4180). Text that a spreadsheet would run as a formula (starting with = + - @,
 * or a tab or carriage return that some strip first) gets a leading single quote, unless it is
 * phone-like (above). Numbers and booleans are ours, never formulas, and stay as they are.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s) && !PHONE_LIKE.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
