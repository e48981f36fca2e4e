import type { FastifyRequest } from 'fastify';
import { HttpProblem } from '../http/errors.js';
import type { App } from '../types.js';
import { authenticate, parseBearer } from './authenticate.js';
import { IpAllowList, normalizeIp, readAllowList } from './ip-allowlist.js';
import { authenticatePostback, authenticateProvider } from './machine-tokens.js';

export const clientIp = (req: FastifyRequest) => normalizeIp(req.ip);

/**
 * The one auth path. For every request: the credential's form (no database), the account
 * allow-list, the credential itself, then the route's declared access. Handlers only ever see
 * request.principal.
 */
export function installAuth(app: App) {
  app.decorateRequest('principal', null);
  app.decorateRequest('trafficProvider', null);
  app.decorateRequest('postbackPartner', null);

  app.addHook('onRequest', async (req) => {
    const access = req.routeOptions.config ?? {};
    const url = req.url;
    if (!url.startsWith('/api/') && url !== '/api') return;

    // Machines: traffic providers posting leads, partners posting conversions.
    if (access.intake) {
      req.trafficProvider = await authenticateProvider(app.db, req.headers.authorization, clientIp(req));
      return;
    }
    if (access.postback) {
      req.postbackPartner = await authenticatePostback(app.db, (req.params as { token?: string }).token);
      return;
    }

    // A missing or malformed credential is refused before anything touches the database.
    const known = !!req.routeOptions.url;
    const token = known && !access.public ? parseBearer(req.headers.authorization) : null;

    if (!access.allowlistExempt) {
      const list = new IpAllowList(await readAllowList(app.db));
      if (!list.allows(clientIp(req))) {
        throw new HttpProblem(403, 'ip_not_allowed', `Requests from ${clientIp(req)} are not allowed by the account's IP allow-list.`);
      }
    }
    if (!token) return; // public, or an unknown route (404 follows)

    const principal = await authenticate(app.db, token, app.config.sessionIdleMinutes);
    req.principal = principal;

    if (access.sessionOnly && principal.via !== 'session') {
      throw new HttpProblem(403, 'session_required', 'This endpoint is for dashboard sessions only; API keys cannot use it.');
    }
    const needed = access.permission;
    if (!needed) return;
    // A key is judged on its own scopes first (so a view-only key gets insufficient_scope on
    // every write), then on what its operator's role holds now.
    if (principal.via === 'api_key' && !principal.keyScopes.has(needed)) {
      throw new HttpProblem(403, 'insufficient_scope', `This API key lacks the scope ${needed}.`);
    }
    if (!principal.rolePermissions.has(needed)) {
      throw new HttpProblem(403, 'forbidden', `Your role does not have the permission ${needed}.`);
    }
  });
}
