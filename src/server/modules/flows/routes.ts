import { Type } from 'typebox';
import { newId, nowIso } from '../../db/ids.js';
import { containsText } from '../../db/like.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, Page, pageOf } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { audit } from '../audit/service.js';
import {
  findFlow,
  findFlowRow,
  flowColumns,
  flowIsReferenced,
  liveCampaignsOf,
  targetsOf,
  toTarget,
  withTargets,
} from './queries.js';
import { CreateFlow, Flow, FlowListQuery, UpdateFlow } from './schemas.js';
import { checkTargets, currentPartners, replaceTargets, targetErrors, targetSummary } from './service.js';

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
    async (req) => {
      const { limit, cursor, status, q, include_archived, partner_id } = req.query;
      const after = decodeCursor(cursor, ['id']);
      let query = app.db
        .selectFrom('flows')
        .select(flowColumns)
        .orderBy('id')
        .limit(limit + 1);
      if (after) query = query.where('id', '>', after.id);
      if (!include_archived) query = query.where('archived_at', 'is', null);
      if (status) query = query.where('status', '=', status);
      if (q) query = query.where((eb) => containsText(eb.ref('name'), q));
      if (partner_id) {
        query = query.where('id', 'in', (eb) =>
          eb.selectFrom('flow_targets').select('flow_id').where('partner_id', '=', partner_id),
        );
      }
      const page = pageOf(await query.execute(), limit, (r) => ({ id: r.id }));
      return { ...page, data: await withTargets(app.db, page.data) };
    },
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
    async (req) => (await findFlow(app.db, req.params.id)) ?? notFound('flow'),
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
    async (req, reply) => {
      const b = req.body;
      const targets = b.targets ?? [];
      const now = nowIso();
      const id = newId();
      const flow = await app.db.transaction().execute(async (tx) => {
        await checkTargets(tx, targets);
        const row = {
          id,
          name: b.name.trim(),
          status: b.status ?? 'active',
          max_attempts: b.max_attempts ?? 3,
          created_at: now,
          updated_at: now,
          archived_at: null,
        };
        await tx.insertInto('flows').values(row).execute();
        await replaceTargets(tx, id, targets);
        await audit(tx, req, {
          action: 'flow.created',
          target_type: 'flow',
          target_id: id,
          details: {
            name: row.name,
            status: row.status,
            max_attempts: row.max_attempts,
            targets: targetSummary(targets),
          },
        });
        return (await withTargets(tx, [row]))[0];
      });
      return reply.status(201).send(flow);
    },
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
    async (req) => {
      const b = req.body;
      return app.db.transaction().execute(async (tx) => {
        const flow = (await findFlowRow(tx, req.params.id, true)) ?? notFound('flow');
        if (flow.archived_at) conflict('This flow is archived; archived flows cannot be changed.');
        const before = (await withTargets(tx, [flow]))[0];
        if (b.targets) {
          await checkTargets(tx, b.targets, new Set(before.targets.map((t) => t.partner_id)));
          await replaceTargets(tx, flow.id, b.targets);
        }
        const patch = {
          ...(b.name !== undefined ? { name: b.name.trim() } : {}),
          ...(b.status !== undefined ? { status: b.status } : {}),
          ...(b.max_attempts !== undefined ? { max_attempts: b.max_attempts } : {}),
          updated_at: nowIso(),
        };
        await tx.updateTable('flows').set(patch).where('id', '=', flow.id).execute();
        const changed = (k: 'name' | 'status' | 'max_attempts') => (b[k] !== undefined ? { [k]: before[k] } : {});
        await audit(tx, req, {
          action: 'flow.updated',
          target_type: 'flow',
          target_id: flow.id,
          details: {
            name: flow.name,
            before: {
              ...changed('name'),
              ...changed('status'),
              ...changed('max_attempts'),
              ...(b.targets ? { targets: targetSummary(before.targets) } : {}),
            },
            after: { ...b, ...(b.targets ? { targets: targetSummary(b.targets) } : {}) },
          },
        });
        return (await findFlow(tx, flow.id))!;
      });
    },
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
      await app.db.transaction().execute(async (tx) => {
        const flow = (await findFlowRow(tx, req.params.id, true)) ?? notFound('flow');
        const campaigns = await liveCampaignsOf(tx, flow.id);
        if (campaigns.length) {
          const names = campaigns.slice(0, 10).map((c) => `"${c.name}" (${c.id})`);
          conflict(
            `Campaigns still route through this flow: ${names.join(', ')}${campaigns.length > 10 ? ', …' : ''}. Give them another flow first.`,
          );
        }
        if (await flowIsReferenced(tx, flow.id)) {
          if (flow.archived_at) return; // already archived: nothing changes
          const now = nowIso();
          await tx.updateTable('flows').set({ archived_at: now, updated_at: now }).where('id', '=', flow.id).execute();
          await audit(tx, req, {
            action: 'flow.archived',
            target_type: 'flow',
            target_id: flow.id,
            details: { name: flow.name, reason: 'leads or archived campaigns refer to it' },
          });
          return;
        }
        const targets = await targetsOf(tx, [flow.id]);
        await tx.deleteFrom('flow_targets').where('flow_id', '=', flow.id).execute();
        await tx.deleteFrom('flows').where('id', '=', flow.id).execute();
        await audit(tx, req, {
          action: 'flow.deleted',
          target_type: 'flow',
          target_id: flow.id,
          details: { name: flow.name, targets: targetSummary(targets.map(toTarget)) },
        });
      });
      return reply.status(204).send(null);
    },
  );
}
