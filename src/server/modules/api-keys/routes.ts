import { Type } from 'typebox';
import { issueToken } from '../../auth/credentials.js';
import type { Permission } from '../../auth/permissions.js';
import { nowIso } from '../../db/ids.js';
import { HttpProblem, invalid, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, Page, PageQuery, pageOf } from '../../http/pagination.js';
import { principalOf, type App, type Principal } from '../../types.js';
import { audit } from '../audit/service.js';
import { IdParams } from '../roles/schemas.js';
import { findKey, keyColumns, toApiKey } from './queries.js';
import { ApiKey, ApiKeyCreated, CreateApiKey, KeyStatus } from './schemas.js';

/** Your own keys; admins see everyone's. Anything else is "not found", not "forbidden". */
async function visibleKey(app: App, p: Principal, id: string) {
  const key = await findKey(app.db, id);
  if (!key || (key.operator_id !== p.operator.id && !p.isAdmin)) return notFound('API key');
  return key;
}

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
    async (req, reply) => {
      const p = principalOf(req);
      const { name, scopes, expires_at } = req.body;
      if (expires_at && Date.parse(expires_at) <= Date.now())
        invalid([{ field: 'expires_at', message: 'must be in the future' }]);
      const notHeld = scopes.filter((s) => !p.rolePermissions.has(s as Permission));
      if (notHeld.length) {
        throw new HttpProblem(
          403,
          'scope_not_held',
          `Your role does not hold: ${notHeld.join(', ')}. No key was made.`,
        );
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
      await app.db.transaction().execute(async (tx) => {
        await tx.insertInto('api_keys').values(row).execute();
        await audit(tx, req, {
          action: 'api_key.created',
          target_type: 'api_key',
          target_id: id,
          details: { name: row.name, scopes, expires_at: row.expires_at },
        });
      });
      return reply.status(201).send({ ...toApiKey(row), secret: token });
    },
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
    async (req) => {
      const p = principalOf(req);
      const { limit, cursor, all, status } = req.query;
      if (all && !p.isAdmin) throw new HttpProblem(403, 'forbidden', "Only admins can list every operator's keys.");
      const after = decodeCursor(cursor, ['id']);
      const now = nowIso();
      let q = app.db
        .selectFrom('api_keys')
        .select(keyColumns)
        .orderBy('id')
        .limit(limit + 1);
      if (!all) q = q.where('operator_id', '=', p.operator.id);
      if (after) q = q.where('id', '>', after.id);
      if (status === 'revoked') q = q.where('revoked_at', 'is not', null);
      if (status === 'expired') q = q.where('revoked_at', 'is', null).where('expires_at', '<=', now);
      if (status === 'active') {
        q = q
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]));
      }
      const page = pageOf(await q.execute(), limit, (r) => ({ id: r.id }));
      return { ...page, data: page.data.map(toApiKey) };
    },
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
    async (req) => toApiKey(await visibleKey(app, principalOf(req), req.params.id)),
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
    async (req) => {
      const key = await visibleKey(app, principalOf(req), req.params.id);
      if (key.revoked_at) return toApiKey(key);
      const revoked_at = nowIso();
      await app.db.transaction().execute(async (tx) => {
        await tx
          .updateTable('api_keys')
          .set({ revoked_at })
          .where('id', '=', key.id)
          .where('revoked_at', 'is', null)
          .execute();
        await audit(tx, req, {
          action: 'api_key.revoked',
          target_type: 'api_key',
          target_id: key.id,
          details: { name: key.name, owner_id: key.operator_id },
        });
      });
      return toApiKey({ ...key, revoked_at });
    },
  );
}
