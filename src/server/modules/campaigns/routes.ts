import { Type } from 'typebox';
import { newId, nowIso } from '../../db/ids.js';
import { containsText } from '../../db/like.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, Page, pageOf } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { audit } from '../audit/service.js';
import { campaignHasLeads, campaignsWithNames, findCampaign, findCampaignRow, toCampaign } from './queries.js';
import { Campaign, CampaignListQuery, CreateCampaign, UpdateCampaign } from './schemas.js';
import { checkReferences, referenceErrors, storedPayout } from './service.js';
import { parsePrice, shownPrice } from '../../distribution/prices.js';

const tags = ['Campaigns'];

/** The stored payout as the audit log keeps it (decimal, like the API). */
const payoutOf = (json: string) => shownPrice(parsePrice(json)!);

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
    async (req) => {
      const { limit, cursor, status, q, include_archived, traffic_provider_id, flow_id } = req.query;
      const after = decodeCursor(cursor, ['id']);
      let query = campaignsWithNames(app.db)
        .orderBy('campaigns.id')
        .limit(limit + 1);
      if (after) query = query.where('campaigns.id', '>', after.id);
      if (!include_archived) query = query.where('campaigns.archived_at', 'is', null);
      if (status) query = query.where('campaigns.status', '=', status);
      if (q) query = query.where((eb) => containsText(eb.ref('campaigns.name'), q));
      if (traffic_provider_id) query = query.where('campaigns.traffic_provider_id', '=', traffic_provider_id);
      if (flow_id) query = query.where('campaigns.flow_id', '=', flow_id);
      const page = pageOf(await query.execute(), limit, (r) => ({ id: r.id }));
      return { ...page, data: page.data.map(toCampaign) };
    },
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
    async (req) => (await findCampaign(app.db, req.params.id)) ?? notFound('campaign'),
  );

  app.post(
    '/api/campaigns',
    {
      config: { permission: 'campaigns:edit', moreChecks: (body) => referenceErrors(app.db, (body ?? {}) as object) },
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
    async (req, reply) => {
      const b = req.body;
      const id = newId();
      const now = nowIso();
      const flow_id = b.flow_id ?? null;
      await app.db.transaction().execute(async (tx) => {
        await checkReferences(tx, { traffic_provider_id: b.traffic_provider_id, flow_id, payout: b.payout });
        const row = {
          id,
          name: b.name.trim(),
          status: b.status ?? 'active',
          traffic_provider_id: b.traffic_provider_id,
          flow_id,
          countries: JSON.stringify(b.countries ?? []),
          payout: storedPayout(b.payout),
          created_at: now,
          updated_at: now,
          archived_at: null,
        };
        await tx.insertInto('campaigns').values(row).execute();
        await audit(tx, req, {
          action: 'campaign.created',
          target_type: 'campaign',
          target_id: id,
          details: {
            name: row.name,
            status: row.status,
            traffic_provider_id: row.traffic_provider_id,
            flow_id,
            countries: b.countries ?? [],
            payout: payoutOf(row.payout),
          },
        });
      });
      return reply.status(201).send((await findCampaign(app.db, id))!);
    },
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
    async (req) => {
      const b = req.body;
      await app.db.transaction().execute(async (tx) => {
        const c = (await findCampaignRow(tx, req.params.id, true)) ?? notFound('campaign');
        if (c.archived_at) conflict('This campaign is archived; archived campaigns cannot be changed.');
        await checkReferences(tx, b, c);
        const patch = {
          ...(b.name !== undefined ? { name: b.name.trim() } : {}),
          ...(b.status !== undefined ? { status: b.status } : {}),
          ...(b.traffic_provider_id !== undefined ? { traffic_provider_id: b.traffic_provider_id } : {}),
          ...(b.flow_id !== undefined ? { flow_id: b.flow_id } : {}),
          ...(b.countries !== undefined ? { countries: JSON.stringify(b.countries) } : {}),
          ...(b.payout !== undefined ? { payout: storedPayout(b.payout) } : {}),
          updated_at: nowIso(),
        };
        await tx.updateTable('campaigns').set(patch).where('id', '=', c.id).execute();
        const stored = {
          name: c.name,
          status: c.status,
          traffic_provider_id: c.traffic_provider_id,
          flow_id: c.flow_id,
          countries: JSON.parse(c.countries),
          payout: payoutOf(c.payout),
        };
        const before = Object.fromEntries(Object.keys(b).map((k) => [k, stored[k as keyof typeof stored]]));
        await audit(tx, req, {
          action: 'campaign.updated',
          target_type: 'campaign',
          target_id: c.id,
          details: { name: c.name, before, after: b },
        });
      });
      return (await findCampaign(app.db, req.params.id))!;
    },
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
      await app.db.transaction().execute(async (tx) => {
        const c = (await findCampaignRow(tx, req.params.id, true)) ?? notFound('campaign');
        if (await campaignHasLeads(tx, c.id)) {
          if (c.archived_at) return; // already archived: nothing changes
          const now = nowIso();
          await tx.updateTable('campaigns').set({ archived_at: now, updated_at: now }).where('id', '=', c.id).execute();
          await audit(tx, req, {
            action: 'campaign.archived',
            target_type: 'campaign',
            target_id: c.id,
            details: { name: c.name, reason: 'leads refer to it' },
          });
          return;
        }
        await tx.deleteFrom('campaigns').where('id', '=', c.id).execute();
        await audit(tx, req, {
          action: 'campaign.deleted',
          target_type: 'campaign',
          target_id: c.id,
          details: {
            name: c.name,
            traffic_provider_id: c.traffic_provider_id,
            flow_id: c.flow_id,
            payout: payoutOf(c.payout),
          },
        });
      });
      return reply.status(204).send(null);
    },
  );
}
