// Maps the API's `errors[]` onto form fields. A nested field (`allowed_ips[3]`,
// `duplicate_policy.window_hours`, `payout.amount`) is shown at the input that holds it; the
// API's message stays the single source of truth: nothing is checked in the browser.
import { problemText, type Problem } from '../api/client';

export interface FieldErrors {
  at: (input: string) => string | undefined;
}

export const noErrors: FieldErrors = { at: () => undefined };

/**
 * `inputs` maps a field prefix to the input showing it (longest prefix wins); `label` turns the
 * rest of the field into words, e.g. `[3]` of allowed_ips into "line 4".
 */
export function fieldErrors(errors: Problem['errors'], inputs: string[], label: (input: string, rest: string) => string = (_, r) => r): FieldErrors {
  const byInput = new Map<string, string>();
  for (const e of errors ?? []) {
    const input = [...inputs].sort((a, b) => b.length - a.length).find((i) => e.field === i || e.field.startsWith(`${i}[`) || e.field.startsWith(`${i}.`));
    const key = input ?? e.field;
    const rest = input ? label(key, e.field.slice(key.length).replace(/^\./, '')) : '';
    if (!byInput.has(key)) byInput.set(key, rest ? `${rest}: ${e.message}` : e.message);
  }
  return { at: (i) => byInput.get(i) };
}

/** The alert text for a refused save: a pointer to the fields, or the problem itself. */
export function refusal(p: Problem, what: string): string {
  return p.errors?.length ? `The ${what} was not saved. Please correct the fields marked below.` : problemText(p);
}
