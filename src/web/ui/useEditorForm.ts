import { useState } from 'react';
import { useLocation } from 'react-router-dom';
import { problemText, type Problem } from '../api/client';
import { useUnsavedGuard } from './useUnsavedGuard';

/**
 * The state every editor has: the form, the API's field errors and refusal, "Saved", "saving…",
 * and the unsaved-changes guard. `submit` runs one save: the API call, then either the refusal
 * mapped onto the fields, or `onSaved` with the stored item.
 */
export function useEditorForm<F, E>(initial: () => F, noErrors: E) {
  const location = useLocation();
  const guard = useUnsavedGuard();
  const [form, setForm] = useState<F>(initial);
  const [errors, setErrors] = useState<E>(noErrors);
  const [problem, setProblem] = useState<string | null>(null);
  // Set by the navigation that follows creating an item, so "Saved" survives the route change.
  const [saved, setSaved] = useState<boolean>(Boolean((location.state as { saved?: boolean } | null)?.saved));
  const [saving, setSaving] = useState(false);

  /** An edit: marks the form unsaved. */
  const set = (patch: Partial<F>) => {
    guard.markDirty();
    setSaved(false);
    setForm((f) => ({ ...f, ...patch }));
  };

  /** A refusal found before asking the API (e.g. a template that is not JSON). */
  const refuse = (fieldErrors: E, text: string) => {
    setSaved(false);
    setErrors(fieldErrors);
    setProblem(text);
  };

  async function submit<T>(
    send: () => Promise<{ data?: T; error?: unknown }>,
    refused: (p: Problem) => { errors: E; problem: string },
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

  return { form, set, errors, setErrors, problem, saved, saving, guard, submit, refuse, savedAs };
}
