// A traffic provider's portal credentials (issue 27): its users' sessions (lgps_…) and their own
// API keys (lgpk_…) → a ProviderPrincipal. Only portal routes call this (auth/guard.ts); operator
// routes refuse these tokens before any lookup (parseBearer), so the two kinds of principal never
// meet. The rows come from the same auth cache as the operators', emptied by trigger whenever a
// provider user, its session or key, or its provider changes, so a disabled user or provider is
// refused from the next request on, on every instance.
import type { Config } from '../config.js';
import type { DB } from '../db/database.js';
import { providerScope } from '../db/scope.js';
import { PORTAL_SCOPES, type PortalScope, type ProviderPrincipal } from '../types.js';
import type { AuthCache } from './cache.js';
import { bearerToken, markKeyUsed, markSessionSeen, sessionEnded, unauthorized } from './bearer.js';
import { secretMatches, type ParsedToken } from './credentials.js';

const isPortalScope = (s: string): s is PortalScope => (PORTAL_SCOPES as readonly string[]).includes(s);

/** Authorization header → a well-formed portal session or key token, or 401. No database. */
export const parsePortalBearer = (authorization: string | undefined): ParsedToken =>
  bearerToken(authorization, {
    kinds: ['lgps_', 'lgpk_'],
    missing: 'Send Authorization: Bearer <portal session token or portal API key>.',
    foreign: ['lg_', 'lgs_'],
    foreignDetail: "The portal is for traffic providers' users; operators' credentials do not open it.",
  });

const userColumns = [
  'provider_users.id as user_id',
  'provider_users.email',
  'provider_users.name',
  'provider_users.timezone',
  'provider_users.status',
  'traffic_providers.id as traffic_provider_id',
  'traffic_providers.portal_enabled',
  'traffic_providers.archived_at',
] as const;

type UserRow = {
  user_id: string | null;
  email: string | null;
  name: string | null;
  timezone: string | null;
  status: string | null;
  traffic_provider_id: string;
  portal_enabled: number;
  archived_at: string | null;
};

function assertOpen(row: UserRow) {
  if (row.status !== 'active') throw unauthorized('This portal user is disabled.');
  if (Number(row.portal_enabled) !== 1 || row.archived_at !== null)
    throw unauthorized("This traffic provider's portal is closed.");
}

const base = (row: UserRow) => ({
  user: { id: row.user_id ?? '', email: row.email ?? '', name: row.name ?? '', timezone: row.timezone ?? 'UTC' },
  trafficProviderId: row.traffic_provider_id,
  scope: providerScope(row.traffic_provider_id),
});

export async function authenticatePortal(
  db: DB,
  parsed: ParsedToken,
  limits: Pick<Config, 'sessionIdleMinutes' | 'sessionMaxHours'>,
  cache: AuthCache,
  generation: string,
): Promise<ProviderPrincipal> {
  const now = Date.now();
  if (parsed.kind === 'lgps_') {
    const row = await cache.row(`portal-session:${parsed.id}`, generation, () =>
      db
        .selectFrom('provider_sessions')
        .innerJoin('traffic_providers', 'traffic_providers.id', 'provider_sessions.traffic_provider_id')
        .leftJoin('provider_users', 'provider_users.id', 'provider_sessions.provider_user_id')
        .leftJoin('operators', 'operators.id', 'provider_sessions.viewer_operator_id')
        .select([
          ...userColumns,
          'provider_sessions.secret_hash',
          'provider_sessions.last_seen_at',
          'provider_sessions.created_at',
          'provider_sessions.viewer_operator_id',
          'operators.email as viewer_email',
          'operators.name as viewer_name',
          'operators.timezone as viewer_timezone',
          'operators.status as viewer_status',
        ])
        .where('provider_sessions.id', '=', parsed.id)
        .executeTakeFirst(),
    );
    if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw unauthorized('The session is not valid.');
    const expired = sessionEnded(row, now, limits);
    if (expired) {
      await db.deleteFrom('provider_sessions').where('id', '=', parsed.id).execute();
      throw unauthorized(expired);
    }
    // "View as provider" reads the portal of a provider whose users may all be disabled or not
    // yet invited: it stands on the operator who opened it (checked when it was made), while
    // that operator stays active.
    if (row.viewer_operator_id === null) assertOpen(row);
    else if (row.viewer_status !== 'active') throw unauthorized('The operator viewing this portal is disabled.');
    await markSessionSeen(db, 'provider_sessions', parsed.id, row.last_seen_at, now);
    const viewAs = row.viewer_operator_id === null ? null : { operatorId: row.viewer_operator_id };
    const who = viewAs
      ? { user_id: viewAs.operatorId, email: row.viewer_email, name: row.viewer_name, timezone: row.viewer_timezone }
      : {};
    return {
      ...base({ ...row, ...who }),
      via: 'session',
      // Viewing as the provider is read only.
      scopes: new Set<PortalScope>(viewAs ? ['portal:view'] : PORTAL_SCOPES),
      viewAs,
      sessionId: parsed.id,
      apiKeyId: null,
    };
  }

  const row = await cache.row(`portal-key:${parsed.id}`, generation, () =>
    db
      .selectFrom('provider_api_keys')
      .innerJoin('provider_users', 'provider_users.id', 'provider_api_keys.provider_user_id')
      .innerJoin('traffic_providers', 'traffic_providers.id', 'provider_users.traffic_provider_id')
      .select([
        ...userColumns,
        'provider_api_keys.secret_hash',
        'provider_api_keys.scopes',
        'provider_api_keys.expires_at',
        'provider_api_keys.revoked_at',
        'provider_api_keys.last_used_at',
      ])
      .where('provider_api_keys.id', '=', parsed.id)
      .executeTakeFirst(),
  );
  if (!row || !secretMatches(parsed.secret, row.secret_hash)) throw unauthorized('The API key is not valid.');
  if (row.revoked_at) throw unauthorized('The API key has been revoked.');
  if (row.expires_at && Date.parse(row.expires_at) <= now) throw unauthorized('The API key has expired.');
  assertOpen(row);
  await markKeyUsed(db, 'provider_api_keys', parsed.id, row.last_used_at, now);
  return {
    ...base(row),
    via: 'api_key',
    scopes: new Set((JSON.parse(row.scopes) as string[]).filter(isPortalScope)),
    viewAs: null,
    sessionId: null,
    apiKeyId: parsed.id,
  };
}
