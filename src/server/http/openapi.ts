import type { RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from 'typebox';
import { requireGrantedAccess } from '../auth/guard.js';
import { isWriteAction } from '../auth/permissions.js';
import type { App, RouteAccess, RouteInfo } from '../types.js';
import { ProblemSchema } from './errors.js';
import { UNLIMITED_ROUTES } from './rate-limit.js';

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'validation_failed: the input is malformed; `errors` names each bad field',
  401: 'unauthorized: missing, malformed, unknown, expired or revoked credential',
  403: 'ip_not_allowed, forbidden, insufficient_scope, session_required or scope_not_held',
  404: 'not_found: no such resource, or not visible to the caller',
  409: 'conflict: the request clashes with the current state',
  413: 'payload_too_large: the body exceeds the server limit',
  415: 'unsupported_media_type: send application/json',
  429: 'rate_limited: too many requests or attempts; retry after the Retry-After header',
  503: 'unavailable: the database cannot be reached or cannot write, or the server is shutting down; retry after the Retry-After header (seconds)',
};

const POSTBACK_415 = 'unsupported_media_type: send application/json or application/x-www-form-urlencoded';

const problemResponse = (status: number) => ({
  description: PROBLEM_DESCRIPTIONS[status] ?? 'Problem',
  content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
});

/** Problem responses a route returns besides the ones every route gets automatically. */
export const problems = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, problemResponse(s)])) as Record<
    number,
    ReturnType<typeof problemResponse>
  >;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function accessSentence(a: RouteAccess): string {
  if (a.public) return 'Access: public, no credentials needed.';
  if (a.intake)
    return "Access: a traffic provider's intake token (`Authorization: Bearer lgt_…`), from an address in its allowed_ips. Not subject to the account IP allow-list.";
  if (a.postback)
    return "Access: the partner's postback token in the path (the postback URL is the credential). Not subject to the account IP allow-list.";
  if (a.portal)
    return `Access: traffic-provider portal only: a provider user's session (lgps_…) or its own API key (lgpk_…) with the \`${a.portal}\` scope. Operators' credentials get 401; everything it reads is its own provider's.`;
  const parts: string[] = [];
  if (a.permission) parts.push(`Access: needs the \`${a.permission}\` permission (key scope and role).`);
  if (a.authenticated) parts.push('Access: any valid session or API key.');
  if (a.sessionOnly) parts.push('Dashboard sessions only: API keys get 403 `session_required`.');
  if (a.adminOnly)
    parts.push(
      'Admins only (the built-in admin role): any other operator gets 403 `forbidden`, whatever permissions their role holds.',
    );
  return parts.join(' ');
}

/**
 * Deny by default and document by construction: every route must say who may call it and
 * carry operationId, tags, summary and a success response schema, or start-up fails. The
 * standard problem answers (400, 401, 403, 413, 415) are added from what the route takes.
 */
export function installRouteRules(app: App, table: RouteInfo[]) {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = ([] as string[]).concat(route.method);
    const schema = (route.schema ??= {}) as Record<string, any>;
    const access = (route.config ??= {}) as RouteAccess;
    const where = `${methods.join(',')} ${route.url}`;
    // Every handler runs only on a request the guard granted for this route's declared access.
    requireGrantedAccess(route);

    // Swagger UI's own pages and files are registered by its plugin, which cannot declare
    // access: they are the one exception, public by name (the allow-list still applies).
    if (route.url === '/api/docs' || route.url.startsWith('/api/docs/')) {
      access.public = true;
      schema.hide = true;
      for (const method of methods) table.push({ method, url: route.url, hidden: true, access });
      return;
    }
    if (
      !access.permission &&
      !access.public &&
      !access.sessionOnly &&
      !access.authenticated &&
      !access.intake &&
      !access.postback &&
      !access.metrics &&
      !access.portal
    ) {
      throw new Error(
        `${where} declares no access: set config.permission, public, sessionOnly, authenticated, intake, postback, metrics or portal`,
      );
    }
    // The portal is a room of its own: its routes take provider principals only and live under
    // /api/portal/, and nothing under /api/portal/ takes an operator (public ones aside).
    const underPortal = route.url.startsWith('/api/portal/');
    if (access.portal && !underPortal) throw new Error(`${where} is a portal route outside /api/portal/`);
    if (underPortal && !access.portal && !access.public) {
      throw new Error(`${where} is under /api/portal/ but declares operator access`);
    }
    if (access.portal && (access.permission || access.authenticated || access.adminOnly || access.intake)) {
      throw new Error(`${where}: a portal route declares portal access alone (sessionOnly aside)`);
    }
    // The account allow-list is for the operators' own addresses; providers sign in from theirs.
    if (access.portal) access.allowlistExempt = true;
    // Ending one's own session (sessionOnly) is the one write a view scope may do.
    if (access.portal === 'portal:view' && !access.sessionOnly && methods.some((m) => WRITE_METHODS.has(m))) {
      throw new Error(`${where} is a write but requires only portal:view`);
    }
    if (!route.url.startsWith('/api/') || schema.hide === true) {
      schema.hide = true;
      for (const method of methods) table.push({ method, url: route.url, hidden: true, access });
      return;
    }
    // Admin powers come only from a session signed in with a password, never from a key.
    if (access.adminOnly && !access.sessionOnly) throw new Error(`${where} is adminOnly: it must be sessionOnly too`);
    if ((access.intake || access.postback) && !access.allowlistExempt) {
      throw new Error(
        `${where}: machine-token routes must be allowlistExempt (providers and partners are not on the account allow-list)`,
      );
    }
    if (access.permission && !isWriteAction(access.permission) && methods.some((m) => WRITE_METHODS.has(m))) {
      throw new Error(`${where} is a write but requires only ${access.permission}; view scopes never allow writes`);
    }
    for (const field of ['operationId', 'tags', 'summary']) {
      if (!schema[field]) throw new Error(`${where} has no ${field} in its schema`);
    }
    const responses = (schema.response ??= {}) as Record<string, unknown>;
    if (!Object.keys(responses).some((s) => /^2\d\d$/.test(s)))
      throw new Error(`${where} declares no success response`);

    // A query parameter with a default is optional to the caller (validation fills it in):
    // the document must not call it required.
    for (const part of ['querystring', 'headers']) {
      const s = schema[part];
      if (s?.properties && Array.isArray(s.required))
        s.required = s.required.filter((k: string) => s.properties[k]?.default === undefined);
    }

    const add = (status: number) => (responses[status] ??= problemResponse(status));
    // A write method parses whatever body it is sent, so it can answer 400/413/415 even
    // without declaring a body.
    const takesBody = !!schema.body || methods.some((m) => WRITE_METHODS.has(m));
    if (takesBody || schema.querystring || schema.params) add(400);
    if (takesBody) add(413);
    // Postbacks also take forms (partners send either); every other body is JSON.
    if (takesBody)
      responses[415] ??= access.postback
        ? { ...problemResponse(415), description: POSTBACK_415 }
        : problemResponse(415);
    if (!access.public) [401, 403].forEach(add);
    if (!access.allowlistExempt) add(403);
    if (!UNLIMITED_ROUTES.has(route.url)) add(429); // every route but the health checks is under the rate limits (http/rate-limit.ts)
    add(503); // the database cannot be reached or write (db/unavailable.ts), or the server is shutting down

    if (access.public || access.postback) schema.security = [];
    if (access.intake) schema.security = [{ intakeToken: [] }];
    if (access.portal) schema.security = [{ portalAuth: [] }];
    if (access.intake) schema['x-permission'] = 'intake-token';
    else if (access.portal) schema['x-permission'] = access.portal;
    else if (access.postback) schema['x-permission'] = 'postback-token';
    else if (access.permission) schema['x-permission'] = access.permission;
    else if (access.authenticated) schema['x-permission'] = 'authenticated';
    if (access.sessionOnly) schema['x-session-only'] = true;
    if (access.adminOnly) schema['x-admin-only'] = true;
    schema.description = [schema.description, accessSentence(access)].filter(Boolean).join('\n\n');
    for (const method of methods) table.push({ method, url: route.url, hidden: false, access });
  });
}

type OpenApiDoc = {
  paths?: Record<string, Record<string, { responses?: Record<string, { headers?: Record<string, unknown> }> }>>;
  components?: Record<string, any>;
};

/**
 * Every answer of a rate-limited operation (all but the health check; http/rate-limit.ts)
 * carries the RateLimit and RateLimit-Policy headers of the IETF draft while limits are on:
 * declared once in components and referenced from each response.
 */
function declareRateLimitHeaders(doc: OpenApiDoc): OpenApiDoc {
  doc.components ??= {};
  doc.components.headers = {
    ...doc.components.headers,
    RateLimit: {
      description:
        'What is left of each limit in force: `"key";r=<remaining>;t=<seconds to reset>, "ip";r=…;t=…` (IETF RateLimit headers draft). Absent when limits are off.',
      schema: { type: 'string', maxLength: 200 },
    },
    'RateLimit-Policy': {
      description:
        'The limits in force: `"key";q=<requests>;w=60` per API key or session, `"ip";q=…;w=60` per client address, per server instance. Absent when limits are off.',
      schema: { type: 'string', maxLength: 200 },
    },
    'Retry-After': {
      description: 'Seconds until a request may be retried (on 429 and 503).',
      schema: { type: 'integer', format: 'int32', minimum: 0 },
    },
  };
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (UNLIMITED_ROUTES.has(path)) continue;
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses ?? {})) {
        response.headers = {
          ...response.headers,
          RateLimit: { $ref: '#/components/headers/RateLimit' },
          'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
          ...(status === '429' || status === '503'
            ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
            : {}),
        };
      }
    }
  }
  return doc;
}

export async function installOpenApi(app: App, version: string) {
  app.addSchema(ProblemSchema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Leadgate API',
        version,
        description:
          'The REST API behind every screen of the Leadgate dashboard. Authenticate with ' +
          '`Authorization: Bearer <token>`: a dashboard session token from POST /api/auth/login, ' +
          'or an API key (`lg_…`) made in Settings → API. An API key acts as the operator who ' +
          "made it, limited to its scopes and to what that operator's role holds now. " +
          'Each operation names the permission it needs in `x-permission`.',
      },
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'Session token (lgs_…) or API key (lg_…)' },
          intakeToken: {
            type: 'http',
            scheme: 'bearer',
            description: "A traffic provider's intake token (lgt_…), for POST /api/intake/leads only",
          },
          portalAuth: {
            type: 'http',
            scheme: 'bearer',
            description:
              "A traffic provider user's portal session (lgps_…) or portal API key (lgpk_…), for /api/portal/ only",
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transformObject: (documentObject) =>
      declareRateLimitHeaders((documentObject as { openapiObject: OpenApiDoc }).openapiObject) as never,
  });
  await app.register(swaggerUi, {
    routePrefix: '/api/docs',
    // Tags start closed: this Swagger UI stops rendering past about 130 open operations (149 today), so each
    // tag opens on demand.
    uiConfig: { persistAuthorization: false, displayOperationId: true, tryItOutEnabled: true, docExpansion: 'none' },
  });
  app.get(
    '/api/openapi.json',
    {
      config: { public: true },
      schema: {
        operationId: 'getOpenApi',
        tags: ['Meta'],
        summary: 'This API described as OpenAPI 3.1',
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'OpenAPI 3.1 document' }) },
      },
    },
    async () => app.swagger(),
  );
}
