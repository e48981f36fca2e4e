import { createHmac } from 'node:crypto';

// What a lead keeps of its email and phone once the retention has purged its contacts
// (retention-service.ts): a keyed digest of each, so the duplicate checks (intake/duplicates.ts,
// imports/queries.ts existingLeads) still find it while nothing in the row spells the contact. The
// key is the install's match key (quality/match-secret.ts, the blocklists' email and phone keys);
// the domain ("lead-email:", "lead-phone:") keeps these digests apart from the blocklists'. The
// value is the lead's stored, normalized email or phone, as intake compares them.

export type DigestField = 'email' | 'phone';

export const contactDigest = (field: DigestField, value: string, secret: Buffer): string =>
  createHmac('sha256', secret).update(`lead-${field}:${value}`).digest('base64url');

/** Both digests of a lead's contacts (an empty contact, an erased one, has none). */
export const contactDigests = (lead: { email: string; phone: string }, secret: Buffer) => ({
  email: lead.email ? contactDigest('email', lead.email, secret) : null,
  phone: lead.phone ? contactDigest('phone', lead.phone, secret) : null,
});

/** The digests a duplicate check compares ('' for an empty contact: no stored digest is ''). */
export const duplicateDigests = (lead: { email: string; phone: string }, secret: Buffer) => {
  const d = contactDigests(lead, secret);
  return { email: d.email ?? '', phone: d.phone ?? '' };
};

export const NO_DIGESTS = { email: '', phone: '' } as const;
