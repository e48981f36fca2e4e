import type { CapSlot, CapWindow } from './caps.js';
import type { Refusal } from './eligibility.js';

// Candidates not offered a lead, and how they read: in a lead's reason, in leads.verdicts, in
// the simulator's answer. The verdicts themselves are eligibility.ts's REFUSALS.

/** What a skip names of a candidate (route.ts Candidate). */
type Skipped = { name: string; partner: { id: string } };

/** A candidate not offered the lead, and why: recorded on the lead (leads.verdicts), answered by the simulator. */
export interface Skip {
  partner_id: string;
  name: string;
  verdict: Refusal;
  reason: string;
  /** The cap that was full, with its numbers (verdict cap_full). */
  cap?: {
    kind: string;
    window: CapWindow;
    country: string | null;
    counts: 'deliveries' | 'ftds';
    used: number;
    cap: number;
  };
}

export const skip = (c: Skipped, verdict: Refusal, reason: string): Skip => ({
  partner_id: c.partner.id,
  name: c.name,
  verdict,
  reason,
});

export const capFull = (c: Skipped, s: CapSlot, used: number): Skip => ({
  ...skip(c, 'cap_full', s.full),
  cap: { kind: s.kind, window: s.window, country: s.country, counts: s.counts, used, cap: s.cap },
});

/** How a skipped candidate reads in a lead's reason: "Name (why)". */
export const skipText = (s: Skip) => `${s.name} (${s.reason})`;

/** "at most 3 attempts per lead": a flow's max_attempts, as reasons say it. */
export const attemptsPerLead = (max: number) => `at most ${max} attempt${max === 1 ? '' : 's'} per lead`;

/** A lead's reason when no partner took it: each partner tried, how many were not, and the skipped with why. */
export function rejectionReason(tried: string[], skips: Skip[], maxAttempts: number): string {
  const notTried = skips.filter((s) => s.verdict === 'not_tried').length;
  const skipped = skips.filter((s) => s.verdict !== 'not_tried').map(skipText);
  if (!tried.length && !notTried)
    return `No eligible partner: ${skipped.length ? skipped.join(', ') : 'the flow has no partners'}`;
  const parts: string[] = [];
  if (tried.length) parts.push(`Every partner tried declined: ${tried.join(', ')}`);
  if (notTried) parts.push(`${notTried} more not tried (${attemptsPerLead(maxAttempts)})`);
  if (skipped.length) parts.push(`not eligible: ${skipped.join(', ')}`);
  return parts.join('; ');
}

/** What leads.verdicts keeps of the skips (names are looked up when read: a partner may be renamed). */
export const verdictsJson = (skips: Skip[]) =>
  skips.length ? JSON.stringify(skips.map(({ name: _name, ...rest }) => rest)) : null;
