import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import { Page, PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { IdParams } from '../roles/schemas.js';
import { ApiKey, ApiKeyCreated, CreateApiKey, KeyStatus } from './schemas.js';
import { createApiKey, getApiKey, listApiKeys, revokeApiKey } from './service.js';

export default async function apiKeyRoutes(app: App) {
  app.post(
    '/api/api-keys',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'createApiKey',
        tags: ['API keys'],
        summary: 'Make an API key',
        description:
          'The key acts as you, limited to its scopes and to what your role holds at the time of each ' +
          'request. Its secret is in this response only. A scope your role does not hold: 403 scope_not_held.',
        body: CreateApiKey,
        response: { 201: ApiKeyCreated },
      },
    },
    async (req, reply) => reply.status(201).send(await createApiKey(app.db, actorOf(req), req.body)),
  );

  app.get(
    '/api/api-keys',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'listApiKeys',
        tags: ['API keys'],
        summary: "Your API keys (admins: all=true for everyone's); never a secret",
        querystring: Type.Object(
          {
            ...PageQuery,
            all: Type.Boolean({ default: false, description: "Admins only: every operator's keys" }),
            status: Type.Optional(KeyStatus),
          },
          { additionalProperties: false },
        ),
        response: { 200: Page(ApiKey, 'ApiKeyPage') },
      },
    },
    async (req) => listApiKeys(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/api-keys/:id',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'getApiKey',
        tags: ['API keys'],
        summary: 'One API key; never its secret',
        params: IdParams,
        response: { 200: ApiKey, ...problems(404) },
      },
    },
    async (req) => getApiKey(app.db, actorOf(req), req.params.id),
  );

  app.post(
    '/api/api-keys/:id/revoke',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['API keys'],
        summary: 'Revoke an API key',
        description:
          'Takes effect on the very next request, on every server instance. Revoking a revoked key changes nothing.',
        params: IdParams,
        response: { 200: ApiKey, ...problems(404) },
      },
    },
    async (req) => revokeApiKey(app.db, actorOf(req), req.params.id),
  );
}
