import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { HttpProblem } from '../http/errors.js';
import { refusedTargetReason } from '../http/request-target.js';
import type { App, RouteAccess } from '../types.js';
import { authenticate, parseBearer } from './authenticate.js';
import { authCacheOf } from './cache.js';
import { IpAllowList, normalizeIp, readAllowList } from './ip-allowlist.js';
import { authenticatePostback, authenticateProvider } from './machine-tokens.js';
import { checkMetricsToken } from './metrics-token.js';
import { authenticatePortal, parsePortalBearer } from './portal.js';

export const clientIp = (req: FastifyRequest) => normalizeIp(req.ip);

/** Whether a path, once decoded, is under /api (the router matches decoded paths too). */
function underApi(url: string): boolean {
  const raw = url.split('?')[0];
  let path = raw;
  try {
    path = decodeURIComponent(raw);
  } catch {
    // a bad %-escape is refused before routing (FST_ERR_BAD_URL)
  }
  return path === '/api' || path.startsWith('/api/');
}

/** Set on a request once the guard has granted the access of the route that matched it. */
const GRANTED = Symbol('leadgate.accessGranted');
/** Each route's own identity inside its config (Fastify copies the config object, symbols too). */
const ROUTE_KEY = Symbol('leadgate.route');
type Granted = FastifyRequest & { [GRANTED]?: symbol };
type Keyed = RouteAccess & { [ROUTE_KEY]?: symbol };

/**
 * The one auth path, decided from the route that matched (its declared access), never from the
 * URL's spelling. For every request: a refused request target first, then the credential's
 * form (no database), the account allow-list, the credential itself, then the declared access.
 * Handlers only ever see request.principal (or trafficProvider / postbackPartner).
 */
export function installAuth(app: App) {
  app.decorateRequest('principal', null);
  app.decorateRequest('providerPrincipal', null);
  app.decorateRequest('trafficProvider', null);
  app.decorateRequest('postbackPartner', null);

  // Looked up when a request needs it (a test app may have no database: public routes only).
  const cache = () => authCacheOf(app.db);

  async function assertAllowed(req: FastifyRequest, generation: string) {
    const list = await cache().allowed(generation, async () => new IpAllowList(await readAllowList(app.db)));
    if (!list.allows(clientIp(req))) {
      throw new HttpProblem(
        403,
        'ip_not_allowed',
        `Requests from ${clientIp(req)} are not allowed by the account's IP allow-list.`,
      );
    }
  }

  app.addHook('onRequest', async (req) => {
    const refused = refusedTargetReason(req.raw);
    if (refused) throw new HttpProblem(400, 'validation_failed', refused, [{ field: 'url', message: refused }]);

    // No route matched: no handler runs; the not-found handler answers (a 404 problem under
    // /api, else a dashboard file, which holds no data). A blocked address learns nothing about
    // which API paths exist either.
    if (!req.routeOptions.url) {
      if (underApi(req.url)) await assertAllowed(req, await cache().sync(app.db));
      return;
    }
    const access = req.routeOptions.config as Keyed;
    // A route that never passed the start-up rules (installRouteRules) has no declared access.
    if (!access[ROUTE_KEY]) throw new HttpProblem(403, 'forbidden', 'This route declares no access.');

    // Machines: traffic providers posting leads, partners posting conversions.
    if (access.intake) {
      req.trafficProvider = await authenticateProvider(app.db, req.headers.authorization, clientIp(req));
    } else if (access.postback) {
      req.postbackPartner = await authenticatePostback(app.db, (req.params as { token?: string }).token);
    } else if (access.portal) {
      // A traffic provider's portal: provider principals only (auth/portal.ts). Not on the
      // account allow-list, which is for the operators' own addresses.
      const token = parsePortalBearer(req.headers.authorization);
      const p = await authenticatePortal(app.db, token, app.config, cache(), await cache().sync(app.db));
      req.providerPrincipal = p;
      if (access.sessionOnly && p.via !== 'session') {
        throw new HttpProblem(
          403,
          'session_required',
          'This endpoint is for portal sessions only; API keys cannot use it.',
        );
      }
      if (!p.scopes.has(access.portal)) {
        throw new HttpProblem(
          403,
          p.viewAs ? 'forbidden' : 'insufficient_scope',
          p.viewAs
            ? 'Viewing as the provider is read only.'
            : `This ${p.via === 'api_key' ? 'API key' : 'session'} lacks the scope ${access.portal}.`,
        );
      }
    } else if (access.metrics) {
      // Prometheus: METRICS_TOKEN, no database, no account allow-list (it scrapes from its own address).
      checkMetricsToken(app.config.metricsToken, req.headers.authorization);
    } else {
      // A missing or malformed credential is refused before anything touches the database.
      const token = access.public ? null : parseBearer(req.headers.authorization);
      // One small read per request: whether anything that narrows access changed (auth/cache.ts).
      const generation = token || !access.allowlistExempt ? await cache().sync(app.db) : '';
      if (!access.allowlistExempt) await assertAllowed(req, generation);
      if (token) {
        const principal = await authenticate(app.db, token, app.config, cache(), generation);
        req.principal = principal;
        if (access.sessionOnly && principal.via !== 'session') {
          throw new HttpProblem(
            403,
            'session_required',
            'This endpoint is for dashboard sessions only; API keys cannot use it.',
          );
        }
        const needed = access.permission;
        // A key is judged on its own scopes first (so a view-only key gets insufficient_scope on
        // every write), then on what its operator's role holds now.
        if (needed && principal.via === 'api_key' && !principal.keyScopes.has(needed)) {
          throw new HttpProblem(403, 'insufficient_scope', `This API key lacks the scope ${needed}.`);
        }
        if (needed && !principal.rolePermissions.has(needed)) {
          throw new HttpProblem(403, 'forbidden', `Your role does not have the permission ${needed}.`);
        }
        if (access.adminOnly && !principal.isAdmin) {
          throw new HttpProblem(
            403,
            'forbidden',
            'Admins only: this endpoint is for the built-in admin role, whatever permissions another role holds.',
          );
        }
      }
    }
    (req as Granted)[GRANTED] = access[ROUTE_KEY];
  });
}

/**
 * Called from onRoute for every route: its handler runs only on a request the guard granted
 * for that very route's access. If a hook were ever skipped (a plugin context, a later
 * refactor), the handler refuses instead of running unguarded.
 */
export function requireGrantedAccess(route: RouteOptions) {
  const handler = route.handler;
  const where = `${String(route.method)} ${route.url}`;
  const key = Symbol(where);
  (route.config as Keyed)[ROUTE_KEY] = key;
  route.handler = function guarded(this: unknown, req: FastifyRequest, reply: FastifyReply) {
    if ((req as Granted)[GRANTED] !== key) {
      req.log.error({ route: where }, 'handler reached without the access it declares: refused');
      throw new HttpProblem(403, 'forbidden', 'This request was not authorized for this route.');
    }
    return handler.call(this as never, req, reply);
  } as RouteOptions['handler'];
}
