import type { Selectable } from 'kysely';
import { displayPrefix, keyStatus } from '../../auth/credentials.js';
import type { ProviderApiKeysTable } from '../../db/tables.js';
import type { PortalScope } from '../../types.js';

type KeyRow = Omit<Selectable<ProviderApiKeysTable>, 'secret_hash'>;

/** A portal API key in the API's shape (never its hash). */
export const toPortalKey = (k: KeyRow) => ({
  id: k.id,
  name: k.name,
  scopes: JSON.parse(k.scopes) as PortalScope[],
  expires_at: k.expires_at,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
  status: keyStatus(k),
  prefix: displayPrefix('lgpk_', k.id),
});
