import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { findCampaignRow } from './queries.js';
import { Campaign, CampaignListQuery, CreateCampaign, UpdateCampaign } from './schemas.js';
import {
  createCampaign,
  deleteCampaign,
  getCampaign,
  listCampaigns,
  referenceErrors,
  updateCampaign,
} from './service.js';

const tags = ['Campaigns'];

export default async function campaignsRoutes(app: App) {
  app.get(
    '/api/campaigns',
    {
      config: { permission: 'campaigns:view' },
      schema: {
        operationId: 'listCampaigns',
        tags,
        summary: 'Campaigns, oldest first',
        description: 'Archived campaigns are left out unless include_archived=true.',
        querystring: CampaignListQuery,
        response: { 200: Page(Campaign, 'CampaignPage') },
      },
    },
    async (req) => listCampaigns(app.db, req.query, principalOf(req).scope),
  );

  app.get(
    '/api/campaigns/:id',
    {
      config: { permission: 'campaigns:view' },
      schema: {
        operationId: 'getCampaign',
        tags,
        summary: 'One campaign',
        description: 'Archived campaigns are readable too (archived_at is set).',
        params: IdParams,
        response: { 200: Campaign, ...problems(404) },
      },
    },
    async (req) => getCampaign(app.db, req.params.id, principalOf(req).scope),
  );

  app.post(
    '/api/campaigns',
    {
      config: {
        permission: 'campaigns:edit',
        moreChecks: (body, req) => referenceErrors(app.db, (body ?? {}) as object, undefined, principalOf(req).scope),
      },
      schema: {
        operationId: 'createCampaign',
        tags,
        summary: 'Create a campaign',
        description:
          'traffic_provider_id and flow_id (when not null) must name records that exist and are not archived; ' +
          "otherwise 400 names the field. payout.amount is in the installation's currency with at most 2 decimals.",
        body: CreateCampaign,
        response: { 201: Campaign, ...problems(409) },
      },
    },
    async (req, reply) => reply.status(201).send(await createCampaign(app.db, actorOf(req), req.body)),
  );

  app.patch(
    '/api/campaigns/:id',
    {
      config: {
        permission: 'campaigns:edit',
        moreChecks: async (body, req) =>
          referenceErrors(
            app.db,
            (body ?? {}) as object,
            await findCampaignRow(app.db, (req.params as { id: string }).id),
            principalOf(req).scope,
          ),
      },
      schema: {
        operationId: 'updateCampaign',
        tags,
        summary: 'Change a campaign',
        description:
          'Fields left out keep their value; `payout` is replaced whole. A new traffic_provider_id or flow_id must name a ' +
          'record that exists and is not archived (else 400 naming the field); flow_id null stops routing. ' +
          'An archived campaign cannot be changed (409).',
        params: IdParams,
        body: UpdateCampaign,
        response: { 200: Campaign, ...problems(404, 409) },
      },
    },
    async (req) => updateCampaign(app.db, actorOf(req), req.params.id, req.body),
  );

  app.delete(
    '/api/campaigns/:id',
    {
      config: { permission: 'campaigns:edit' },
      schema: {
        operationId: 'deleteCampaign',
        tags,
        summary: 'Delete or archive a campaign',
        description:
          'A campaign that leads refer to is archived instead: archived_at is set, it leaves the list unless ' +
          'include_archived=true, stays readable by id and cannot be changed. Otherwise it is deleted. ' +
          '409 only when a lead for it arrived during the delete (try again: it will be archived).',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted or archived' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      await deleteCampaign(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
