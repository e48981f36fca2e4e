// What the bits of leads.flags mean: the fraud flags intake raises (modules/quality/flags.ts
// computes them) and routing reads (a partner may refuse some: distribution/quality-rule.ts).
// Here in the ground so both rooms name them alike. A flag's bit never changes meaning: new
// flags take new bits.

export const FLAGS = [
  'phone_country',
  'phone_type',
  'disposable_email',
  'ip_country',
  'velocity_ip',
  'velocity_phone',
  'velocity_email_domain',
] as const;
export type Flag = (typeof FLAGS)[number];

export const flagBit = (f: Flag) => 1 << FLAGS.indexOf(f);

/** The names of a stored mask's flags, in FLAGS order. */
export const flagNames = (mask: number): Flag[] => FLAGS.filter((_, i) => (mask & (1 << i)) !== 0);

/** The mask with any of these flags (a search for leads with one of them); names it does not know count for nothing. */
export const maskOf = (flags: readonly Flag[]) => flags.reduce((m, f) => (FLAGS.includes(f) ? m | flagBit(f) : m), 0);
