// The only way the dashboard talks to the server: openapi-fetch typed with the generated schema,
// so calling an operation the server does not publish fails type-checking.
import createClient, { type Middleware } from 'openapi-fetch';
import { loginPath } from '../returnTo';
import type { components, paths } from './schema';
import { session } from './session';

export type Problem = components['schemas']['Problem'];

export { borrowSession, session, setEndedElsewhereHandler } from './session';

const NOTICE_KEY = 'leadgate.notice';

/** A message for the login screen (e.g. "your session ended"), kept until the next sign-in. */
export const notice = {
  set: (text: string) => sessionStorage.setItem(NOTICE_KEY, text),
  get: (): string | null => sessionStorage.getItem(NOTICE_KEY),
  clear: () => sessionStorage.removeItem(NOTICE_KEY),
};

let onExpired: () => void = () => window.location.assign(loginPath(window.location));
/** The app replaces the full-page fallback with a router navigation. */
export function setExpiredHandler(fn: () => void) {
  onExpired = fn;
}

/**
 * Sign-in and setup go without the session: a wrong password there answers 401, which must not
 * read as "this session is gone" and sign out every tab sharing it.
 */
const WITHOUT_SESSION = new Set(['/api/auth/login', '/api/setup']);

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token && !WITHOUT_SESSION.has(new URL(request.url).pathname))
      request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    // A 401 to a request that carried a session means the session is gone (expired, logged out
    // elsewhere); a 401 to the login form itself is just a wrong password, and one to a token
    // this tab has since replaced (signed in again meanwhile) says nothing about the current one.
    if (response.status === 401 && request.headers.get('Authorization') === `Bearer ${session.token()}`) {
      session.clear();
      notice.set('Your session has ended. Please sign in again.');
      onExpired();
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

/**
 * A readable message for an API error (problem+json), naming each bad field (by the label the
 * screen gives it, when `labels` has one: "Search" for `q`).
 */
export function problemText(error: unknown, labels: Record<string, string> = {}): string {
  if (error && typeof error === 'object' && 'detail' in error) {
    const p = error as Problem;
    // A validation problem's `errors` name each field; its `detail` only repeats them.
    const fields = (p.errors ?? []).map((e) => `${labels[e.field] ?? e.field}: ${e.message}`);
    return fields.length ? fields.join(' · ') : p.detail;
  }
  if (error instanceof Error) return error.message;
  return 'The server could not be reached. Please try again.';
}

/**
 * Unwraps an openapi-fetch result: its data (undefined for a 204), or an Error carrying the
 * problem's text.
 */
export function must<T>(result: { data?: T; error?: unknown; response: Response }, labels?: Record<string, string>): T {
  if (result.error !== undefined || !result.response.ok) throw new Error(problemText(result.error, labels));
  return result.data as T;
}
