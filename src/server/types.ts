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
    trafficProvider: import('./auth/machine-tokens.js').IntakeProvider | null;
    postbackPartner: import('./auth/machine-tokens.js').PostbackPartner | null;
  }
  interface FastifyInstance {
    db: DB;
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
