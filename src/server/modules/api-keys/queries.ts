import type { Kysely } from 'kysely';
import { displayPrefix } from '../../auth/credentials.js';
import type { ApiKeyRow, Database } from '../../db/tables.js';

export const keyColumns = [
  'id',
  'operator_id',
  'name',
  'scopes',
  'created_at',
  'expires_at',
  'revoked_at',
  'last_used_at',
] as const;
type KeyRow = Omit<ApiKeyRow, 'secret_hash'>;

export function keyStatus(k: Pick<KeyRow, 'revoked_at' | 'expires_at'>, now = Date.now()) {
  if (k.revoked_at) return 'revoked' as const;
  if (k.expires_at && Date.parse(k.expires_at) <= now) return 'expired' as const;
  return 'active' as const;
}

export const toApiKey = (k: KeyRow) => ({
  id: k.id,
  name: k.name,
  scopes: JSON.parse(k.scopes) as string[],
  expires_at: k.expires_at,
  created_at: k.created_at,
  last_used_at: k.last_used_at,
  revoked_at: k.revoked_at,
  status: keyStatus(k),
  prefix: displayPrefix('lg_', k.id),
  operator_id: k.operator_id,
});

export const findKey = (db: Kysely<Database>, id: string) =>
  db.selectFrom('api_keys').select(keyColumns).where('id', '=', id).executeTakeFirst();
