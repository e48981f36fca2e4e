import { useState } from 'react';
import { useLocation } from 'react-router-dom';
import { problemText, type Problem } from '../api/client';
import { noErrors, type FieldErrors } from './fields';
import { useUnsavedGuard } from './useUnsavedGuard';

/**
 * The state every editor has: the form, the API's field errors and refusal, "Saved", "saving…",
 * and the unsaved-changes guard. `submit` runs one save: the API call, then either the refusal
 * mapped onto the fields, or `onSaved` with the stored item. An edit clears the messages of the
 * inputs it changes: `inputsOf` names them for a form key (default: the key itself).
 */
export function useEditorForm<F>(initial: () => F, inputsOf: (key: string) => string[] = (k) => [k]) {
  const location = useLocation();
  const guard = useUnsavedGuard();
  const [form, setForm] = useState<F>(initial);
  const [errors, setErrors] = useState<FieldErrors>(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  // A refusal that was about fields goes once every one of them has been edited.
  const [aboutFields, setAboutFields] = useState(false);
  // Set by the navigation that follows creating an item, so "Saved" survives the route change.
  const [saved, setSaved] = useState<boolean>(Boolean((location.state as { saved?: boolean } | null)?.saved));
  const [saving, setSaving] = useState(false);

  /** An edit: marks the form unsaved. */
  const set = (patch: Partial<F>) => {
    guard.markDirty();
    setSaved(false);
    setForm((f) => ({ ...f, ...patch }));
    setErrors((e) => e.without(Object.keys(patch).flatMap(inputsOf)));
  };

  /** A refusal found before asking the API (e.g. a template that is not JSON). */
  const refuse = (fieldErrors: FieldErrors, text: string) => {
    setSaved(false);
    setErrors(fieldErrors);
    setProblem(text);
    setAboutFields(fieldErrors.list.length > 0);
  };

  async function submit<T>(
    send: () => Promise<{ data?: T; error?: unknown }>,
    refused: (p: Problem) => { errors: FieldErrors; problem: string },
    onSaved: (data: T) => void | Promise<void>,
  ) {
    setSaving(true);
    setSaved(false);
    try {
      const r = await send();
      if (r.error !== undefined) {
        const shown = refused(r.error as Problem);
        return refuse(shown.errors, shown.problem);
      }
      setErrors(noErrors);
      setProblem(null);
      guard.markClean();
      await onSaved(r.data as T);
    } catch (e) {
      setAboutFields(false);
      setProblem(problemText(e));
    } finally {
      setSaving(false);
    }
  }

  /** After saving an existing item: the server's version of it, and "Saved". */
  const savedAs = (next: F) => {
    setForm(next);
    setSaved(true);
  };

  const shownProblem = aboutFields && errors.list.length === 0 ? null : problem;
  return { form, set, errors, setErrors, problem: shownProblem, saved, saving, guard, submit, savedAs };
}

/** The alert text for a refused save: a pointer to the fields, or the problem itself. */
export function refusal(p: Problem, what: string): string {
  return p.errors?.length ? `The ${what} was not saved. Please correct the fields marked below.` : problemText(p);
}
