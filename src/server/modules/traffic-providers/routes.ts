import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import providerPortalRoutes from './portal-routes.js';
import {
  CreateTrafficProvider,
  TrafficProvider,
  TrafficProviderListQuery,
  TrafficProviderWithToken,
  UpdateTrafficProvider,
} from './schemas.js';
import {
  allowedIpErrors,
  createTrafficProvider,
  deleteTrafficProvider,
  getTrafficProvider,
  listTrafficProviders,
  rotateTrafficProviderToken,
  updateTrafficProvider,
} from './service.js';

const TAGS = ['Traffic providers'];

export default async function trafficProvidersRoutes(app: App) {
  await providerPortalRoutes(app);

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
    async (req) => listTrafficProviders(app.db, req.query, principalOf(req).scope),
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
    async (req) => getTrafficProvider(app.db, req.params.id, principalOf(req).scope),
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
    async (req, reply) => reply.status(201).send(await createTrafficProvider(app.db, actorOf(req), req.body)),
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
    async (req) => updateTrafficProvider(app.db, actorOf(req), req.params.id, req.body),
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
    async (req) => rotateTrafficProviderToken(app.db, actorOf(req), req.params.id),
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
      await deleteTrafficProvider(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
