import { Type } from 'typebox';
import { issueToken } from '../../auth/credentials.js';
import { isPostgres } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { audit } from '../audit/service.js';
import {
  findTrafficProvider,
  listTrafficProviders,
  liveCampaignsUsing,
  allowedIpErrors,
  normaliseAllowedIps,
  providerReferenced,
  toTrafficProvider,
} from './queries.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import {
  CreateTrafficProvider,
  DEFAULT_DUPLICATE_POLICY,
  TrafficProvider,
  TrafficProviderListQuery,
  TrafficProviderWithToken,
  UpdateTrafficProvider,
} from './schemas.js';

const TAGS = ['Traffic providers'];
const ARCHIVED =
  'This traffic provider is archived (deleted while leads or campaigns refer to it) and cannot be changed.';

const intakeUrl = async (app: App) => publicLink(await readPublicBaseUrl(app.db), '/api/intake/leads');

export default async function trafficProvidersRoutes(app: App) {
  app.get(
    '/api/traffic-providers',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'listTrafficProviders',
        tags: TAGS,
        summary: 'Traffic providers (affiliates)',
        description: 'Oldest first. Archived providers are left out unless include_archived=true.',
        querystring: TrafficProviderListQuery,
        response: { 200: Page(TrafficProvider, 'TrafficProviderPage') },
      },
    },
    async (req) => listTrafficProviders(app.db, req.query),
  );

  app.get(
    '/api/traffic-providers/:id',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'getTrafficProvider',
        tags: TAGS,
        summary: 'One traffic provider',
        description: 'Archived providers are still readable here, with archived_at set.',
        params: IdParams,
        response: { 200: TrafficProvider, ...problems(404) },
      },
    },
    async (req) =>
      toTrafficProvider((await findTrafficProvider(app.db, req.params.id)) ?? notFound('traffic provider')),
  );

  app.post(
    '/api/traffic-providers',
    {
      config: { permission: 'traffic_providers:edit', moreChecks: (body) => allowedIpErrors(body) },
      schema: {
        operationId: 'createTrafficProvider',
        tags: TAGS,
        summary: 'Create a traffic provider',
        description:
          'The answer carries the intake token (token, lgt_…) once; no other answer shows it again ' +
          '(rotate it to get a new one). Only its hash is stored.',
        body: CreateTrafficProvider,
        response: { 201: TrafficProviderWithToken },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const errors: FieldError[] = [];
      const allowed_ips = normaliseAllowedIps(b.allowed_ips ?? [], errors);
      if (errors.length) invalid(errors);
      const token = issueToken('lgt_');
      const now = nowIso();
      const row = {
        id: newId(),
        name: b.name.trim(),
        status: b.status ?? 'active',
        token_id: token.id,
        allowed_ips: JSON.stringify(allowed_ips),
        duplicate_policy: JSON.stringify(b.duplicate_policy ?? DEFAULT_DUPLICATE_POLICY),
        silent_after_hours: b.silent_after_hours ?? null,
        created_at: now,
        updated_at: now,
        archived_at: null,
      };
      await app.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('traffic_providers')
          .values({ ...row, token_hash: token.secretHash })
          .execute();
        await audit(tx, req, {
          action: 'traffic_provider.created',
          target_type: 'traffic_provider',
          target_id: row.id,
          details: {
            name: row.name,
            status: row.status,
            allowed_ips,
            duplicate_policy: JSON.parse(row.duplicate_policy),
          },
        });
      });
      return reply
        .status(201)
        .send({ ...toTrafficProvider(row), token: token.token, intake_url: await intakeUrl(app) });
    },
  );

  app.patch(
    '/api/traffic-providers/:id',
    {
      config: { permission: 'traffic_providers:edit', moreChecks: (body) => allowedIpErrors(body) },
      schema: {
        operationId: 'updateTrafficProvider',
        tags: TAGS,
        summary: 'Change a traffic provider',
        description:
          'Changes only the fields sent; allowed_ips and duplicate_policy, when sent, are replaced as a ' +
          'whole. The intake token is not changed here (see rotate-token). An archived provider cannot be changed (409).',
        params: IdParams,
        body: UpdateTrafficProvider,
        response: { 200: TrafficProvider, ...problems(404, 409) },
      },
    },
    async (req) => {
      const b = req.body;
      const errors: FieldError[] = [];
      const allowed_ips = b.allowed_ips ? normaliseAllowedIps(b.allowed_ips, errors) : undefined;
      if (errors.length) invalid(errors);
      return app.db.transaction().execute(async (tx) => {
        const current = (await findTrafficProvider(tx, req.params.id)) ?? notFound('traffic provider');
        if (current.archived_at) conflict(ARCHIVED);
        const patch = {
          ...(b.name !== undefined ? { name: b.name.trim() } : {}),
          ...(b.status !== undefined ? { status: b.status } : {}),
          ...(allowed_ips ? { allowed_ips: JSON.stringify(allowed_ips) } : {}),
          ...(b.duplicate_policy ? { duplicate_policy: JSON.stringify(b.duplicate_policy) } : {}),
          ...(b.silent_after_hours !== undefined ? { silent_after_hours: b.silent_after_hours } : {}),
          updated_at: nowIso(),
        };
        await tx.updateTable('traffic_providers').set(patch).where('id', '=', current.id).execute();
        await audit(tx, req, {
          action: 'traffic_provider.updated',
          target_type: 'traffic_provider',
          target_id: current.id,
          details: { name: current.name, changes: { ...b, ...(allowed_ips ? { allowed_ips } : {}) } },
        });
        return toTrafficProvider({ ...current, ...patch });
      });
    },
  );

  app.post(
    '/api/traffic-providers/:id/rotate-token',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'rotateTrafficProviderToken',
        tags: TAGS,
        summary: "Replace a traffic provider's intake token",
        description:
          'Issues a new intake token, shown once in this answer. The old token stops working at once. ' +
          'An archived provider cannot be changed (409).',
        params: IdParams,
        response: { 200: TrafficProviderWithToken, ...problems(404, 409) },
      },
    },
    async (req) => {
      const token = issueToken('lgt_');
      const intake_url = await intakeUrl(app); // before the transaction: SQLite has one connection
      return app.db.transaction().execute(async (tx) => {
        const current = (await findTrafficProvider(tx, req.params.id)) ?? notFound('traffic provider');
        if (current.archived_at) conflict(ARCHIVED);
        const patch = { token_id: token.id, updated_at: nowIso() };
        await tx
          .updateTable('traffic_providers')
          .set({ ...patch, token_hash: token.secretHash })
          .where('id', '=', current.id)
          .execute();
        await audit(tx, req, {
          action: 'traffic_provider.token_rotated',
          target_type: 'traffic_provider',
          target_id: current.id,
          details: { name: current.name },
        });
        return { ...toTrafficProvider({ ...current, ...patch }), token: token.token, intake_url };
      });
    },
  );

  app.delete(
    '/api/traffic-providers/:id',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'deleteTrafficProvider',
        tags: TAGS,
        summary: 'Delete (or archive) a traffic provider',
        description:
          'A provider that a campaign (not archived) still uses is refused with 409 `conflict` naming the ' +
          'campaigns. Otherwise, if leads (or archived campaigns) refer to it, it is archived (204): left ' +
          'out of lists unless include_archived=true, still readable by id with archived_at, refused as a ' +
          "new campaign's provider, and no longer changeable. If nothing refers to it, it is deleted (204).",
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted or archived' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      await app.db.transaction().execute(async (tx) => {
        // Lock the row first (PostgreSQL): a flow or campaign being pointed at it meanwhile holds
        // a share lock, so the usage check below sees every reference committed before it.
        if (isPostgres(tx))
          await tx.selectFrom('traffic_providers').select('id').where('id', '=', req.params.id).forUpdate().execute();
        const current = (await findTrafficProvider(tx, req.params.id)) ?? notFound('traffic provider');
        const campaigns = await liveCampaignsUsing(tx, current.id);
        if (campaigns.length)
          conflict(
            `Campaigns still use this traffic provider: ${campaigns.join(', ')}. Archive them or move them to another provider first.`,
          );
        if (await providerReferenced(tx, current.id)) {
          if (current.archived_at) return; // already archived: nothing to do
          await tx
            .updateTable('traffic_providers')
            .set({ archived_at: nowIso() })
            .where('id', '=', current.id)
            .execute();
          await audit(tx, req, {
            action: 'traffic_provider.archived',
            target_type: 'traffic_provider',
            target_id: current.id,
            details: { name: current.name },
          });
        } else {
          await tx.deleteFrom('traffic_providers').where('id', '=', current.id).execute();
          await audit(tx, req, {
            action: 'traffic_provider.deleted',
            target_type: 'traffic_provider',
            target_id: current.id,
            details: { name: current.name },
          });
        }
      });
      return reply.status(204).send(null);
    },
  );
}
