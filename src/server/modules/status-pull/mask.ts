import { contactMasker, maskContactLike, type Masker } from '../../privacy/mask.js';
import type { MatchedLead } from './pull.js';
import type { PullRun } from './schemas.js';

// What a run shows a caller without leads:contacts (rule 16): the partner's answer may quote our
// leads' emails and phones, in its excerpt and in the status words. The partner's text about a
// lead the run matched goes through that lead's own masker (every spelling of its contacts),
// then, like all other partner text (of no lead of ours, or cut off from its lead's id), through
// maskContactLike. Our own words (the URL, errors, notes) carry no contacts and stay readable.

/** What separates values in the answers partners send (JSON, form or XML-ish text). */
const TOKEN_GAP = /[\s"',:;{}[\]=&<>]+/;

export function maskRun(run: PullRun, matched: MatchedLead[]): PullRun {
  const leads = new Map(matched.map((m) => [m.partner_lead_id, m]));
  const made = new Map<string, Masker>();
  const maskerOf = (partnerLeadId: string): Masker | null => {
    const lead = leads.get(partnerLeadId);
    if (!lead) return null;
    let masker = made.get(partnerLeadId);
    if (!masker) made.set(partnerLeadId, (masker = contactMasker(lead)));
    return masker;
  };
  const partnerText = (text: string | null, mask: Masker | null) =>
    text === null ? null : maskContactLike(mask ? mask(text) : text);
  return {
    ...run,
    requests: run.requests.map((r) => {
      if (r.response_excerpt === null) return r;
      // The leads an excerpt lists are found by the ids in it: one pass over 2 KiB, however many leads the run matched.
      const own = new Set(
        r.response_excerpt
          .split(TOKEN_GAP)
          .map(maskerOf)
          .filter((m) => m !== null),
      );
      let excerpt = r.response_excerpt;
      for (const mask of own) excerpt = mask(excerpt);
      return { ...r, response_excerpt: maskContactLike(excerpt) };
    }),
    changes: run.changes.map((c) => {
      const mask = maskerOf(c.partner_lead_id);
      return {
        ...c,
        // The id the lead view shows (through the same masker): kept readable unless it is a contact.
        partner_lead_id: mask ? mask(c.partner_lead_id) : c.partner_lead_id,
        status_word: partnerText(c.status_word, mask),
        sale_status: { from: partnerText(c.sale_status.from, mask), to: partnerText(c.sale_status.to, mask) },
      };
    }),
    unmatched: run.unmatched.map(maskContactLike),
  };
}
