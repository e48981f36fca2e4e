import type { paths } from '../api/schema';
import { instantIn } from '../ui/clock';

// components.schemas holds only shared schemas; the key shapes live on the operations.
export type ApiKey = paths['/api/api-keys/{id}']['get']['responses'][200]['content']['application/json'];
export type ApiKeyCreated = paths['/api/api-keys']['post']['responses'][201]['content']['application/json'];

const THIRTY_DAYS_MS = 30 * 24 * 60 * 60 * 1000;

/** Why an active key deserves a look: never used, or idle for 30 days (likely forgotten). */
export function staleness(key: ApiKey, now = Date.now()): string | null {
  if (key.status !== 'active') return null;
  if (!key.last_used_at) return 'Never used';
  return now - Date.parse(key.last_used_at) > THIRTY_DAYS_MS ? 'Unused for 30+ days' : null;
}

/** A date picked in the form (YYYY-MM-DD) → the end of that day in the operator's zone, as ISO 8601. */
export function endOfDay(day: string, zone: string): string {
  return instantIn(zone, `${day}T23:59:59`);
}
