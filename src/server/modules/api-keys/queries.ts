import type { Insertable, Kysely } from 'kysely';
import { displayPrefix, keyStatus } from '../../auth/credentials.js';
import { nowIso } from '../../db/ids.js';
import type { ApiKeyRow, ApiKeysTable, Database } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';

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

/** One page of keys, oldest first: one operator's, or everyone's when `operatorId` is null. */
export async function keyPage(
  db: Kysely<Database>,
  f: { limit: number; cursor?: string; operatorId: string | null; status?: 'active' | 'expired' | 'revoked' },
) {
  const after = decodeCursor(f.cursor, ['id']);
  const now = nowIso();
  let q = db
    .selectFrom('api_keys')
    .select(keyColumns)
    .orderBy('id')
    .limit(f.limit + 1);
  if (f.operatorId !== null) q = q.where('operator_id', '=', f.operatorId);
  if (after) q = q.where('id', '>', after.id);
  if (f.status === 'revoked') q = q.where('revoked_at', 'is not', null);
  if (f.status === 'expired') q = q.where('revoked_at', 'is', null).where('expires_at', '<=', now);
  if (f.status === 'active') {
    q = q
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
  }
  const page = pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
  return { ...page, data: page.data.map(toApiKey) };
}

export const insertKey = (db: Kysely<Database>, row: Insertable<ApiKeysTable>) =>
  db.insertInto('api_keys').values(row).execute();

/** Revokes the key unless it is revoked already (the first revocation time stays). */
export const revokeKey = (db: Kysely<Database>, id: string, revoked_at: string) =>
  db.updateTable('api_keys').set({ revoked_at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
