import type { Config } from '../config.js';
import type { DB } from '../db/database.js';
import { UNSCOPED, type DataScope } from '../db/scope.js';
import type { Principal, PrincipalOperator } from '../types.js';
import type { AuthCache } from './cache.js';
import { bearerToken, markKeyUsed, markSessionSeen, sessionEnded, unauthorized } from './bearer.js';
import { secretMatches, type ParsedToken } from './credentials.js';
import { ALL_PERMISSIONS, isPermission, type Permission } from './permissions.js';

export function rolePermissions(role: { builtin: number; permissions: string }): Set<Permission> {
  // The built-in admin role holds every permission, including ones added in later releases.
  if (role.builtin) return new Set(ALL_PERMISSIONS);
  return new Set((JSON.parse(role.permissions) as string[]).filter(isPermission));
}

const idList = (json: string | null) => (json === null ? null : Object.freeze(JSON.parse(json) as string[]));

/** Whose data a role's operators (and their keys) read; the built-in admin role is never scoped. */
export function roleScope(role: {
  builtin: number;
  scope_traffic_provider_ids: string | null;
  scope_partner_ids: string | null;
}): DataScope {
  if (role.builtin || (role.scope_traffic_provider_ids === null && role.scope_partner_ids === null)) return UNSCOPED;
  return Object.freeze({
    trafficProviderIds: idList(role.scope_traffic_provider_ids),
    partnerIds: idList(role.scope_partner_ids),
  });
}

const operatorColumns = [
  'operators.id as operator_id',
  'operators.email',
  'operators.name',
  'operators.role_id',
  'operators.status',
  'operators.timezone',
  'roles.name as role_name',
  'roles.builtin',
  'roles.permissions',
  'roles.scope_traffic_provider_ids',
  'roles.scope_partner_ids',
] as const;

type OperatorRow = {
  operator_id: string;
  email: string;
  name: string;
  role_id: string;
  status: 'active' | 'disabled';
  timezone: string;
  role_name: string;
  builtin: number;
  permissions: string;
  scope_traffic_provider_ids: string | null;
  scope_partner_ids: string | null;
};

const toOperator = (r: OperatorRow): PrincipalOperator => ({
  id: r.operator_id,
  email: r.email,
  name: r.name,
  role_id: r.role_id,
  role_name: r.role_name,
  status: r.status,
  timezone: r.timezone,
});

/** Authorization header → a well-formed session or key token, or 401. Pure: no database. */
export const parseBearer = (authorization: string | undefined): ParsedToken =>
  bearerToken(authorization, {
    kinds: ['lg_', 'lgs_'],
    missing: 'Send Authorization: Bearer <session token or API key>.',
    foreign: ['lgps_', 'lgpk_'],
    foreignDetail: "A traffic provider's portal credential opens /api/portal/ only.",
  });

/**
 * A well-formed token → principal. The rows come from the auth cache (auth/cache.ts), which a
 * revoke, a role change or a disabled operator empties by trigger on every instance, so each
 * takes effect on the next request there; every check below runs on every request.
 */
export async function authenticate(
  db: DB,
  parsed: ParsedToken,
  limits: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>,
  cache: AuthCache,
  generation: string,
): Promise<Principal> {
  const now = Date.now();

  if (parsed.kind === 'lgs_') {
    const key = `session:${parsed.id}`;
    const row = await cache.row(key, generation, () =>
      db
        .selectFrom('sessions')
        .innerJoin('operators', 'operators.id', 'sessions.operator_id')
        .innerJoin('roles', 'roles.id', 'operators.role_id')
        .select([...operatorColumns, 'sessions.secret_hash', 'sessions.last_seen_at', 'sessions.created_at'])
        .where('sessions.id', '=', parsed.id)
        .executeTakeFirst(),
    );
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw unauthorized('The session is not valid.');
    const ended = sessionEnded(row, now, limits);
    if (ended) {
      await db.deleteFrom('sessions').where('id', '=', parsed.id).execute();
      throw unauthorized(ended);
    }
    if (row.status !== 'active') throw unauthorized('The operator is disabled.');
    await markSessionSeen(db, 'sessions', parsed.id, row.last_seen_at, now);
    const perms = rolePermissions(row);
    return {
      operator: toOperator(row),
      via: 'session',
      permissions: perms,
      keyScopes: perms,
      rolePermissions: perms,
      isAdmin: row.builtin === 1,
      scope: roleScope(row),
      sessionId: parsed.id,
      apiKeyId: null,
    };
  }

  const key = `key:${parsed.id}`;
  const row = await cache.row(key, generation, () =>
    db
      .selectFrom('api_keys')
      .innerJoin('operators', 'operators.id', 'api_keys.operator_id')
      .innerJoin('roles', 'roles.id', 'operators.role_id')
      .select([
        ...operatorColumns,
        'api_keys.secret_hash',
        'api_keys.scopes',
        'api_keys.expires_at',
        'api_keys.revoked_at',
        'api_keys.last_used_at',
      ])
      .where('api_keys.id', '=', parsed.id)
      .executeTakeFirst(),
  );
  if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw unauthorized('The API key is not valid.');
  if (row.revoked_at) throw unauthorized('The API key has been revoked.');
  if (row.expires_at && Date.parse(row.expires_at) <= now) throw unauthorized('The API key has expired.');
  if (row.status !== 'active') throw unauthorized("The API key's operator is disabled.");
  await markKeyUsed(db, 'api_keys', parsed.id, row.last_used_at, now);
  const role = rolePermissions(row);
  const scopes = new Set((JSON.parse(row.scopes) as string[]).filter(isPermission));
  return {
    operator: toOperator(row),
    via: 'api_key',
    permissions: new Set([...scopes].filter((s) => role.has(s))),
    keyScopes: scopes,
    rolePermissions: role,
    isAdmin: row.builtin === 1,
    // A key reads no more than its operator's role: it inherits the role's scope, now.
    scope: roleScope(row),
    sessionId: null,
    apiKeyId: parsed.id,
  };
}
