// Maps the API's `errors[]` onto form inputs, in the words of the labels on screen. A nested
// field (`allowed_ips[3]`, `duplicate_policy.window_hours`, `payout.amount`) is shown at the input
// that holds it, naming the part ("line 4: …"); the summary above the form says the same with the
// input's label ("Allowed IPs, line 4: …"). The API's message stays the single source of truth:
// nothing is checked in the browser. Each message goes as soon as its input is edited.
import type { Problem } from '../api/client';

export interface ShownError {
  /** The input that shows it (an API field prefix, or a form's own key such as a row's key). */
  input: string;
  /** The input's label, and the part of it when nested: "Countries, item 2". */
  label: string;
  /** The message at the input: the API's, after the part when nested ("item 2: …"). */
  atInput: string;
  /** The API's message alone. */
  message: string;
}

export interface FieldErrors {
  list: ShownError[];
  at: (input: string) => string | undefined;
  /** Every message with its label, for the list above the form. */
  summary: string[];
  /** The same without the messages of these inputs (`row1.*`: every input starting so): an edit clears its input's message. */
  without: (inputs: string[]) => FieldErrors;
}

export function shownErrors(list: ShownError[]): FieldErrors {
  const byInput = new Map<string, string>();
  for (const e of list) if (!byInput.has(e.input)) byInput.set(e.input, e.atInput);
  return {
    list,
    at: (i) => byInput.get(i),
    summary: list.map((e) => `${e.label}: ${e.message}`),
    without: (inputs) => {
      const cleared = (input: string) =>
        inputs.some((i) => (i.endsWith('*') ? input.startsWith(i.slice(0, -1)) : input === i));
      return list.some((e) => cleared(e.input))
        ? shownErrors(list.filter((e) => !cleared(e.input)))
        : shownErrors(list);
    },
  };
}

export const noErrors: FieldErrors = shownErrors([]);

/** "countries[1].code" after its input → "item 2, code"; `line` names list items ("line" for text areas). */
export function partWords(rest: string, item = 'item'): string {
  return rest
    .replace(/^\./, '')
    .split(/(?=\[)|\./)
    .filter(Boolean)
    .map((p) => (/^\[\d+\]$/.test(p) ? `${item} ${Number(p.slice(1, -1)) + 1}` : p.replace(/_/g, ' ')))
    .join(', ');
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** "duplicate_policy.window_hours" → "Duplicate policy, window hours": for a field no input claims. */
export const fieldWords = (field: string) => capital(partWords(field));

/** The message at an input, after the part of it that is wrong: "Line 2: …". */
export const partMessage = (part: string, message: string) => (part ? `${capital(part)}: ${message}` : message);

/**
 * `labels` maps each input (an API field prefix; the longest matching prefix wins) to its label
 * on screen; `item` words the list items of an input ("line" for one-per-line text areas).
 */
export function fieldErrors(
  errors: Problem['errors'],
  labels: Record<string, string>,
  item: Record<string, string> = {},
): FieldErrors {
  const inputs = Object.keys(labels).sort((a, b) => b.length - a.length);
  return shownErrors(
    (errors ?? []).map((e) => {
      const input = inputs.find((i) => e.field === i || e.field.startsWith(`${i}[`) || e.field.startsWith(`${i}.`));
      if (!input) return { input: e.field, label: fieldWords(e.field), atInput: e.message, message: e.message };
      const part = partWords(e.field.slice(input.length), item[input]);
      return {
        input,
        label: part ? `${labels[input]}, ${part}` : labels[input],
        atInput: partMessage(part, e.message),
        message: e.message,
      };
    }),
  );
}
