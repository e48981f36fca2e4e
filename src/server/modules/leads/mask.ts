// Contact masking for callers without leads:contacts. Enough stays visible to tell leads apart
// (first letter and domain, country prefix and last two digits), never enough to reach them.

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

/**
 * A partner's answer can echo the lead's contacts back; hide them there too, in the forms a
 * partner is likely to repeat (as stored, and the phone without its "+").
 */
export function maskInText(text: string, lead: { email: string; phone: string }): string {
  let out = text;
  const pairs: [string, string][] = [
    [lead.email, maskEmail(lead.email)],
    [lead.phone, maskPhone(lead.phone)],
    [lead.phone.replace(/^\+/, ''), maskPhone(lead.phone).replace(/^\+/, '')],
  ];
  for (const [plain, masked] of pairs) {
    if (plain.length >= 4) out = out.split(plain).join(masked);
  }
  // Emails are stored lower-case; a partner may echo them in another case.
  if (lead.email.length >= 4) {
    const re = new RegExp(lead.email.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi');
    out = out.replace(re, maskEmail(lead.email));
  }
  return out;
}
