import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { CreateFlow, Flow, FlowListQuery, UpdateFlow } from './schemas.js';
import { createFlow, currentPartners, deleteFlow, getFlow, listFlows, targetErrors, updateFlow } from './service.js';

const tags = ['Flows'];

export default async function flowsRoutes(app: App) {
  app.get(
    '/api/flows',
    {
      config: { permission: 'flows:view' },
      schema: {
        operationId: 'listFlows',
        tags,
        summary: 'Flows, oldest first, each with its targets',
        description: 'Archived flows are left out unless include_archived=true.',
        querystring: FlowListQuery,
        response: { 200: Page(Flow, 'FlowPage') },
      },
    },
    async (req) => listFlows(app.db, req.query, principalOf(req).scope),
  );

  app.get(
    '/api/flows/:id',
    {
      config: { permission: 'flows:view' },
      schema: {
        operationId: 'getFlow',
        tags,
        summary: 'One flow with its targets in order',
        description: 'Archived flows are readable too (archived_at is set).',
        params: IdParams,
        response: { 200: Flow, ...problems(404) },
      },
    },
    async (req) => getFlow(app.db, req.params.id, principalOf(req).scope),
  );

  app.post(
    '/api/flows',
    {
      config: {
        permission: 'flows:edit',
        moreChecks: (body) => targetErrors(app.db, (body as { targets?: unknown } | null)?.targets),
      },
      schema: {
        operationId: 'createFlow',
        tags,
        summary: 'Create a flow',
        description:
          'Targets are kept in the order given. Each partner may appear once per flow and must exist and not be archived; ' +
          'a bad one answers 400 naming `targets[i].partner_id`.',
        body: CreateFlow,
        response: { 201: Flow, ...problems(409) },
      },
    },
    async (req, reply) => reply.status(201).send(await createFlow(app.db, actorOf(req), req.body)),
  );

  app.patch(
    '/api/flows/:id',
    {
      config: {
        permission: 'flows:edit',
        moreChecks: async (body, req) =>
          targetErrors(
            app.db,
            (body as { targets?: unknown } | null)?.targets,
            await currentPartners(app.db, (req.params as { id: string }).id),
          ),
      },
      schema: {
        operationId: 'updateFlow',
        tags,
        summary: 'Change a flow',
        description:
          'Fields left out keep their value. `targets`, when given, replaces the whole list in one transaction: ' +
          'if any target is invalid, nothing changes. A partner that stays in the list keeps its target id. ' +
          'An archived flow cannot be changed (409).',
        params: IdParams,
        body: UpdateFlow,
        response: { 200: Flow, ...problems(404, 409) },
      },
    },
    async (req) => updateFlow(app.db, actorOf(req), req.params.id, req.body),
  );

  app.delete(
    '/api/flows/:id',
    {
      config: { permission: 'flows:edit' },
      schema: {
        operationId: 'deleteFlow',
        tags,
        summary: 'Delete or archive a flow',
        description:
          'A flow that a non-archived campaign routes through is refused with 409 naming the campaigns. ' +
          'A flow that leads (or archived campaigns) still refer to is archived instead: archived_at is set, it leaves ' +
          'the list unless include_archived=true, stays readable by id, cannot be changed, and cannot be given to a campaign. ' +
          'Otherwise the flow and its targets are deleted.',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted or archived' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      await deleteFlow(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
