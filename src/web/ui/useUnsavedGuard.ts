import { useCallback, useEffect, useRef, useState } from 'react';
import { useBlocker } from 'react-router-dom';

const QUESTION = 'You have unsaved changes. Leave this page and lose them?';

/**
 * For an editor: while it has unsaved changes, leaving it (a link, back, closing or reloading the
 * tab) asks first. Call `markDirty` on every edit and `markClean` once the server has the changes.
 */
export function useUnsavedGuard() {
  const [dirty, setDirty] = useState(false);
  // Read by the blocker at navigation time: a save that navigates right after `markClean` (new →
  // its id) must pass, before the state change has rendered.
  const dirtyNow = useRef(false);
  const blocker = useBlocker(
    ({ currentLocation, nextLocation }) => dirtyNow.current && currentLocation.pathname !== nextLocation.pathname,
  );

  useEffect(() => {
    if (blocker.state !== 'blocked') return;
    if (window.confirm(QUESTION)) blocker.proceed();
    else blocker.reset();
  }, [blocker]);

  useEffect(() => {
    if (!dirty) return;
    // The browser shows its own wording for tab close and reload; the handler only asks for it.
    const onBeforeUnload = (e: BeforeUnloadEvent) => e.preventDefault();
    window.addEventListener('beforeunload', onBeforeUnload);
    return () => window.removeEventListener('beforeunload', onBeforeUnload);
  }, [dirty]);

  const mark = useCallback((value: boolean) => {
    dirtyNow.current = value;
    setDirty(value);
  }, []);
  return { dirty, markDirty: useCallback(() => mark(true), [mark]), markClean: useCallback(() => mark(false), [mark]) };
}
