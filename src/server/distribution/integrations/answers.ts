// Reading a partner's answer: its "accepted" flag, the error it gives, excerpts for reasons.

const FALSY_WORDS = new Set(['0', 'false', 'no', 'error', 'fail', 'failed']);

/** The partner's "accepted" flag: true, a non-zero number, or a non-empty string that is not a "no" word. */
export function isTruthy(v: unknown): boolean {
  if (v === true) return true;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.trim() !== '' && !FALSY_WORDS.has(v.trim().toLowerCase());
  return false;
}

export function isHttpUrl(v: unknown): v is string {
  if (typeof v !== 'string') return false;
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

// Where partners usually say why they refused a lead.
const ERROR_KEYS = [
  'error',
  'message',
  'error_message',
  'errorMessage',
  'msg',
  'reason',
  'errors',
  'detail',
  'description',
];

/** What a JSON answer says went wrong (its first error-like value, a few levels deep); null: nothing. */
export function errorMessage(json: unknown, depth = 0): string | null {
  if (typeof json === 'string') return json ? excerpt(json) : null;
  if (depth > 2 || json === null || typeof json !== 'object') return null;
  if (Array.isArray(json)) return json.length ? errorMessage(json[0], depth + 1) : null;
  for (const key of ERROR_KEYS) {
    if (!Object.hasOwn(json, key)) continue;
    const v = (json as Record<string, unknown>)[key];
    const found = typeof v === 'number' ? String(v) : errorMessage(v, depth + 1);
    if (found) return found;
  }
  return null;
}

export const excerpt = (text: string, max = 200) => {
  const t = text.trim();
  return t === '' ? '(empty answer)' : t.length > max ? `${t.slice(0, max)}…` : t;
};
