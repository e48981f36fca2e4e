import { sealValues, unsealValues } from '../../secrets/box.js';
import type { StoredStatusPull } from './schemas.js';

// A status pull's settings as stored: the request headers' values sealed (secrets/box.ts).

export const configToStore = (c: StoredStatusPull) =>
  JSON.stringify({ ...c, request_headers: sealValues(c.request_headers, 'status-pull-header') });

export function configFromStore(json: string): StoredStatusPull {
  const c = JSON.parse(json) as StoredStatusPull;
  return { ...c, request_headers: unsealValues(c.request_headers ?? {}, 'status-pull-header') };
}
