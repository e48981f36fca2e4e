// The dashboard session token: where it lives and how the tabs of one browser share it.
//
// It lives in sessionStorage, not localStorage, so it is gone once the browser's last tab of the
// dashboard closes. A tab opened by hand (a shared link, a new tab) starts with an empty
// sessionStorage, so it asks the open tabs of the same origin over a BroadcastChannel
// (same-origin only, never seen by other sites) and keeps the answer in its own sessionStorage. Ending a session (sign-out, or a 401 saying it is gone) tells every tab holding
// the same token to drop it too.

const TOKEN_KEY = 'leadgate.session';
/** How long a tab without a session waits for another tab to lend it one. */
const ASK_MS = 300;

/** Which side a session opens: a provider user's portal session (lgps_…) or an operator's dashboard one. */
export type SessionKind = 'portal' | 'operator';
export const kindOf = (token: string): SessionKind => (token.startsWith('lgps_') ? 'portal' : 'operator');

type Message = { type: 'ask'; kind: SessionKind } | { type: 'token'; token: string } | { type: 'ended'; token: string };

const channel = typeof BroadcastChannel === 'function' ? new BroadcastChannel('leadgate.session') : null;

let onEndedElsewhere: () => void = () => undefined;
/** The app's reaction when another tab ends the session this tab holds (e.g. to the login page). */
export function setEndedElsewhereHandler(fn: () => void) {
  onEndedElsewhere = fn;
}

export const session = {
  token: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  /** The kind of the session this tab holds, null without one. */
  kind: (): SessionKind | null => {
    const token = session.token();
    return token ? kindOf(token) : null;
  },
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  /** Drops the session here and in every tab that holds the same token. */
  clear: () => {
    const token = session.token();
    sessionStorage.removeItem(TOKEN_KEY);
    if (token) channel?.postMessage({ type: 'ended', token } satisfies Message);
  },
};

channel?.addEventListener('message', ({ data }: MessageEvent<Message>) => {
  const mine = session.token();
  if (!mine) return;
  // A tab lends its session only to a tab asking for that kind (a portal tab, e.g. an operator's
  // "View as provider", never hands its session to a dashboard tab, nor the other way round).
  if (data.type === 'ask' && data.kind === kindOf(mine))
    channel.postMessage({ type: 'token', token: mine } satisfies Message);
  else if (data.type === 'ended' && data.token === mine) {
    sessionStorage.removeItem(TOKEN_KEY);
    onEndedElsewhere();
  }
});

/**
 * For a tab without a session: asks the open tabs for theirs of this kind and resolves with the first answer,
 * or with null after ASK_MS when no tab holds one (then the tab signs in as before). The caller
 * keeps the token (session.set) only if it still wants one by then.
 */
export function borrowSession(kind: SessionKind): Promise<string | null> {
  if (!channel) return Promise.resolve(null);
  return new Promise((resolve) => {
    const done = (token: string | null) => {
      channel.removeEventListener('message', onAnswer);
      clearTimeout(timer);
      resolve(token);
    };
    const onAnswer = ({ data }: MessageEvent<Message>) => {
      if (data.type === 'token') done(data.token);
    };
    const timer = setTimeout(() => done(null), ASK_MS);
    channel.addEventListener('message', onAnswer);
    channel.postMessage({ type: 'ask', kind } satisfies Message);
  });
}
