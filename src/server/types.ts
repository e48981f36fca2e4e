import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import type { DB } from './db/database.js';
import type { Permission } from './auth/permissions.js';
import type { FieldError } from './http/errors.js';
import type { DataScope } from './db/scope.js';

export interface PrincipalOperator {
  id: string;
  email: string;
  name: string;
  role_id: string;
  role_name: string;
  status: 'active' | 'disabled';
  timezone: string;
}

/** Who is calling: resolved once per request by the auth hook, never inside handlers. */
export interface Principal {
  operator: PrincipalOperator;
  via: 'session' | 'api_key';
  /** key scopes ∩ the role's permissions now (for sessions: the role's permissions). */
  permissions: Set<Permission>;
  /** The scopes chosen when the key was made (for sessions: the role's permissions). */
  keyScopes: Set<Permission>;
  /** What the operator's role holds, whatever the credential. */
  rolePermissions: Set<Permission>;
  isAdmin: boolean;
  /**
   * Whose data the operator reads (its role's limit to some traffic providers and/or partners;
   * UNSCOPED for an open role). Every lead-shaped read passes it to its queries (db/scope.ts).
   */
  scope: DataScope;
  sessionId: string | null;
  apiKeyId: string | null;
}

/** The portal's scopes: what a provider user's API key may do (its sessions hold both). */
export const PORTAL_SCOPES = ['portal:view', 'portal:edit'] as const;
export type PortalScope = (typeof PORTAL_SCOPES)[number];

/**
 * A traffic provider's user (issue 27), resolved by the auth hook on portal routes only (never
 * on an operator route: request.principal stays operator-only). Everything it reads is narrowed
 * by `scope` (db/scope.ts) at the query layer.
 */
export interface ProviderPrincipal {
  user: { id: string; email: string; name: string; timezone: string };
  trafficProviderId: string;
  via: 'session' | 'api_key';
  scopes: Set<PortalScope>;
  /** "View as provider": the operator reading this portal (read only); null: the provider user. */
  viewAs: { operatorId: string } | null;
  scope: DataScope;
  sessionId: string | null;
  apiKeyId: string | null;
}

/** One registered route and its declared access (app.routeTable; the route walks read it). */
export interface RouteInfo {
  method: string;
  url: string;
  hidden: boolean;
  access: RouteAccess;
}

export interface RouteAccess {
  /** The module:action the caller needs. */
  permission?: Permission;
  /** Open without credentials. */
  public?: boolean;
  /** Dashboard sessions only: API keys get 403 session_required. */
  sessionOnly?: boolean;
  /**
   * The built-in admin role only, on top of the rest (sessionOnly required): any other operator
   * gets 403 forbidden, whatever permissions their role holds (API-CONTRACT rule 17: backups, licence).
   */
  adminOnly?: boolean;
  /** Any valid credential, session or key (e.g. whoami). */
  authenticated?: boolean;
  /** Not subject to the account IP allow-list (intake, postbacks, health). */
  allowlistExempt?: boolean;
  /** A traffic provider's intake token (Bearer lgt_…): request.trafficProvider. */
  intake?: boolean;
  /** A partner's postback token in the path parameter `token`: request.postbackPartner. */
  postback?: boolean;
  /**
   * A traffic provider's portal route (issue 27): only provider principals (their sessions and
   * keys) with this scope, as request.providerPrincipal; every other route refuses them.
   */
  portal?: PortalScope;
  /** The METRICS_TOKEN as Bearer (Prometheus); 404 while METRICS_TOKEN is unset. No allow-list. */
  metrics?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig extends RouteAccess {
    /**
     * The route's checks beyond its body schema (names that exist, rules across fields), run as
     * well when the schema refused the body, so that one 400 names every bad field at once. The
     * body is then unchecked: test each value's type before using it.
     */
    moreChecks?: (body: unknown, req: FastifyRequest) => Promise<FieldError[]> | FieldError[];
  }
  interface FastifyRequest {
    principal: Principal | null;
    providerPrincipal: ProviderPrincipal | null;
    trafficProvider: import('./auth/machine-tokens.js').IntakeProvider | null;
    postbackPartner: import('./auth/machine-tokens.js').PostbackPartner | null;
  }
  interface FastifyInstance {
    db: DB;
    /** Long reads (reports) off the event loop: db/reader.ts. */
    reader: import('./db/reader.js').Reader;
    config: Config;
    startedAt: number;
    routeTable: RouteInfo[];
  }
}

export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** The principal of a route that is not public (the auth hook guarantees it). */
export function principalOf(req: { principal: Principal | null }): Principal {
  if (!req.principal) throw new Error('principalOf() on a public route');
  return req.principal;
}

/** The provider principal of a portal route (the auth hook guarantees it). */
export function providerPrincipalOf(req: { providerPrincipal: ProviderPrincipal | null }): ProviderPrincipal {
  if (!req.providerPrincipal) throw new Error('providerPrincipalOf() outside a portal route');
  return req.providerPrincipal;
}
