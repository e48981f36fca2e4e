import type { Config } from '../config.js';
import type { DB } from '../db/database.js';
import { nowIso } from '../db/ids.js';
import { UNSCOPED, type DataScope } from '../db/scope.js';
import { HttpProblem } from '../http/errors.js';
import type { Principal, PrincipalOperator } from '../types.js';
import type { AuthCache } from './cache.js';
import { parseToken, secretMatches, type ParsedToken } from './credentials.js';
import { ALL_PERMISSIONS, isPermission, type Permission } from './permissions.js';

const LAST_USED_GRANULARITY_MS = 60_000;

const unauthorized = (detail: string) => new HttpProblem(401, 'unauthorized', detail);

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

const stale = (iso: string | null, now: number, ms: number) => iso === null || now - Date.parse(iso) >= ms;

/** Authorization header → a well-formed session or key token, or 401. Pure: no database. */
export function parseBearer(authorization: string | undefined): ParsedToken {
  if (!authorization) throw unauthorized('Send Authorization: Bearer <session token or API key>.');
  const m = /^Bearer +(\S+)\s*$/i.exec(authorization);
  if (!m) throw unauthorized('The Authorization header must be "Bearer <token>".');
  const parsed = parseToken(m[1]);
  if (parsed && (parsed.kind === 'lgps_' || parsed.kind === 'lgpk_'))
    throw unauthorized("A traffic provider's portal credential opens /api/portal/ only.");
  if (!parsed || (parsed.kind !== 'lg_' && parsed.kind !== 'lgs_')) throw unauthorized('The token is malformed.');
  return parsed;
}

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
    if (now - Date.parse(row.last_seen_at) > limits.sessionIdleMinutes * 60_000) {
      await db.deleteFrom('sessions').where('id', '=', parsed.id).execute();
      throw unauthorized('The session has expired; log in again.');
    }
    // However busy, a session ends SESSION_MAX_HOURS after sign-in: a stolen token is not
    // good forever just because it is used.
    if (now - Date.parse(row.created_at) > limits.sessionMaxHours * 3_600_000) {
      await db.deleteFrom('sessions').where('id', '=', parsed.id).execute();
      throw unauthorized('The session has reached its maximum lifetime; log in again.');
    }
    if (row.status !== 'active') throw unauthorized('The operator is disabled.');
    if (stale(row.last_seen_at, now, LAST_USED_GRANULARITY_MS)) {
      // The stamp moves the generation (by trigger), so every instance reads the row anew.
      await db.updateTable('sessions').set({ last_seen_at: nowIso() }).where('id', '=', parsed.id).execute();
    }
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
  if (stale(row.last_used_at, now, LAST_USED_GRANULARITY_MS)) {
    // Conditional, so several instances racing on the same key write once a minute at most.
    const cutoff = new Date(now - LAST_USED_GRANULARITY_MS).toISOString();
    await db
      .updateTable('api_keys')
      .set({ last_used_at: nowIso() })
      .where('id', '=', parsed.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', cutoff)]))
      .execute();
  }
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
