import type { Kysely } from 'kysely';
import { readSetting, writeSetting } from '../../db/settings.js';
import type { Database } from '../../db/tables.js';
import { invalid } from '../../http/errors.js';

const SETTING_KEY = 'public_base_url';

/** The stored public base URL (an origin such as https://leads.example.com), or null. */
export const readPublicBaseUrl = (db: Kysely<Database>) => readSetting<string | null>(db, SETTING_KEY, null);

export const writePublicBaseUrl = (db: Kysely<Database>, url: string | null) => writeSetting(db, SETTING_KEY, url);

/**
 * Checks a public base URL and returns it as an origin (lower-case host, no default port, no
 * trailing slash), so links are built by plain concatenation. Links carry tokens, so the URL
 * may not hide credentials, a path, a query or a fragment that would change where they go.
 */
export function normalisePublicBaseUrl(raw: string): string {
  const field = 'public_base_url';
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return invalid([{ field, message: 'is not an absolute URL (e.g. https://leads.example.com)' }]);
  }
  const problems: string[] = [];
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problems.push('must start with http:// or https://');
  if (url.username || url.password) problems.push('must not contain a user name or password');
  if (url.pathname !== '/') problems.push('must not have a path (only scheme, host and port)');
  if (url.search || raw.includes('?')) problems.push('must not have a query');
  if (url.hash || raw.includes('#')) problems.push('must not have a fragment');
  if (problems.length) invalid([{ field, message: problems.join('; ') }]);
  return url.origin;
}

/** A path of this API as a link: absolute under the public base URL when one is set. */
export const publicLink = (base: string | null, path: string) => (base ? `${base}${path}` : path);
