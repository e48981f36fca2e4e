import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { issueToken } from '../../auth/credentials.js';
import type { Permission } from '../../auth/permissions.js';
import { nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { HttpProblem, invalid, notFound } from '../../http/errors.js';
import { principalOf, type Principal } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { findKey, insertKey, keyPage, revokeKey, toApiKey } from './queries.js';
import type { CreateApiKey, KeyStatus } from './schemas.js';

/** Your own keys; admins see everyone's. Anything else is "not found", not "forbidden". */
async function visibleKey(db: Kysely<Database>, p: Principal, id: string) {
  const key = await findKey(db, id);
  if (!key || (key.operator_id !== p.operator.id && !p.isAdmin)) return notFound('API key');
  return key;
}

/** A key acting as its maker within its scopes; the secret is in this answer only. */
export async function createApiKey(db: Kysely<Database>, actor: Actor, b: Static<typeof CreateApiKey>) {
  const p = principalOf(actor);
  const { name, scopes, expires_at } = b;
  if (expires_at && Date.parse(expires_at) <= Date.now())
    invalid([{ field: 'expires_at', message: 'must be in the future' }]);
  const notHeld = scopes.filter((s) => !p.rolePermissions.has(s as Permission));
  if (notHeld.length) {
    throw new HttpProblem(403, 'scope_not_held', `Your role does not hold: ${notHeld.join(', ')}. No key was made.`);
  }
  const { id, token, secretHash } = issueToken('lg_');
  const row = {
    id,
    operator_id: p.operator.id,
    name: name.trim(),
    scopes: JSON.stringify([...scopes].sort()),
    secret_hash: secretHash,
    created_at: nowIso(),
    expires_at: expires_at ? new Date(expires_at).toISOString() : null,
    revoked_at: null,
    last_used_at: null,
  };
  await db.transaction().execute(async (tx) => {
    await insertKey(tx, row);
    await audit(tx, actor, {
      action: 'api_key.created',
      target_type: 'api_key',
      target_id: id,
      details: { name: row.name, scopes, expires_at: row.expires_at },
    });
  });
  return { ...toApiKey(row), secret: token };
}

/** Your keys; every operator's with `all`, for admins only. */
export async function listApiKeys(
  db: Kysely<Database>,
  actor: Actor,
  f: { limit: number; cursor?: string; all: boolean; status?: Static<typeof KeyStatus> },
) {
  const p = principalOf(actor);
  if (f.all && !p.isAdmin) throw new HttpProblem(403, 'forbidden', "Only admins can list every operator's keys.");
  return keyPage(db, { limit: f.limit, cursor: f.cursor, status: f.status, operatorId: f.all ? null : p.operator.id });
}

export const getApiKey = async (db: Kysely<Database>, actor: Actor, id: string) =>
  toApiKey(await visibleKey(db, principalOf(actor), id));

/** Revoking a revoked key changes nothing. */
export async function revokeApiKey(db: Kysely<Database>, actor: Actor, id: string) {
  const key = await visibleKey(db, principalOf(actor), id);
  if (key.revoked_at) return toApiKey(key);
  const revoked_at = nowIso();
  await db.transaction().execute(async (tx) => {
    await revokeKey(tx, key.id, revoked_at);
    await audit(tx, actor, {
      action: 'api_key.revoked',
      target_type: 'api_key',
      target_id: key.id,
      details: { name: key.name, owner_id: key.operator_id },
    });
  });
  return toApiKey({ ...key, revoked_at });
}
