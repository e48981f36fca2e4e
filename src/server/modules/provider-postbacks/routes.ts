import { Agent } from 'undici';
import { newId, nowIso } from '../../db/ids.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { checkDestinationUrl, createOutboundAgent } from '../../outbound/guard.js';
import { deliveryLogRoutes } from '../../events/delivery-routes.js';
import type { StoredEvent } from '../../events/dispatcher.js';
import { sendHttp } from '../../events/send-http.js';
import { audit } from '../audit/service.js';
import { PostbackList, PutPostbacks, TestPostback, TestPostbackResult } from './schemas.js';
import {
  postbackRows,
  postbackUrl,
  renderPostbackUrl,
  SAMPLE,
  type PostbackEvent,
  syncPostbackSubscriptions,
  templateFor,
  templateProblem,
} from './service.js';

// A traffic provider's postbacks (S2S to its tracker): set as a whole, tried once by hand, and
// their delivery log. Under the provider's path and permissions.

const TAGS = ['Traffic providers'];

export default async function providerPostbackRoutes(app: App) {
  let agent: Agent | null = null;
  // The test send's own pool, through the outbound guard; made on first use.
  const testAgent = () =>
    (agent ??= createOutboundAgent({
      allowedNetworks: app.config.partnerAllowedNetworks,
      connections: 4,
      pipelining: 1,
    }));
  app.addHook('onClose', async () => agent?.close());

  const provider = async (id: string) =>
    (await app.db
      .selectFrom('traffic_providers')
      .select(['id', 'name', 'archived_at'])
      .where('id', '=', id)
      .executeTakeFirst()) ?? notFound('traffic provider');
  const list = async (id: string) =>
    (await app.db
      .selectFrom('provider_postbacks')
      .select(['event_type', 'campaign_id', 'url'])
      .where('traffic_provider_id', '=', id)
      .orderBy('event_type')
      .orderBy('created_at')
      .execute()) as {
      event_type: PostbackEvent;
      campaign_id: string | null;
      url: string;
    }[];

  app.get(
    '/api/traffic-providers/:id/postbacks',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'getProviderPostbacks',
        tags: TAGS,
        summary: "A traffic provider's postbacks",
        params: IdParams,
        response: { 200: PostbackList, ...problems(404) },
      },
    },
    async (req) => {
      await provider(req.params.id);
      return { postbacks: await list(req.params.id) };
    },
  );

  app.put(
    '/api/traffic-providers/:id/postbacks',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'putProviderPostbacks',
        tags: TAGS,
        summary: "Set a traffic provider's postbacks",
        description:
          "Replaces them all. Each lead event of the provider's leads then calls its URL (GET), at least once, in order per lead, retried for 24 hours. " +
          "A campaign's own postback replaces the provider-wide one for that event. Macros carry only what the provider may know of its own leads.",
        params: IdParams,
        body: PutPostbacks,
        response: { 200: PostbackList, ...problems(404, 409) },
      },
    },
    async (req) => {
      const current = await provider(req.params.id);
      if (current.archived_at) conflict('This traffic provider is archived and cannot be changed.');
      const items = req.body.postbacks;
      const errors: FieldError[] = [];
      const seen = new Set<string>();
      const campaigns = new Set(
        (await app.db.selectFrom('campaigns').select('id').where('traffic_provider_id', '=', current.id).execute()).map(
          (c) => c.id,
        ),
      );
      items.forEach((p, i) => {
        const key = `${p.event_type}\n${p.campaign_id ?? ''}`;
        if (seen.has(key))
          errors.push({
            field: `postbacks/${i}`,
            message: `a second postback for ${p.event_type} and ${p.campaign_id ? 'this campaign' : 'every campaign'}`,
          });
        seen.add(key);
        if (p.campaign_id !== null && !campaigns.has(p.campaign_id))
          errors.push({
            field: `postbacks/${i}/campaign_id`,
            message: "is not one of this traffic provider's campaigns",
          });
        const problem =
          templateProblem(p.url) ??
          checkDestinationUrl(renderPostbackUrl(p.url, SAMPLE), app.config.partnerAllowedNetworks)?.message ??
          null;
        if (problem) errors.push({ field: `postbacks/${i}/url`, message: problem });
      });
      if (errors.length) invalid(errors);
      const before = await list(current.id);
      await app.db.transaction().execute(async (tx) => {
        await tx.deleteFrom('provider_postbacks').where('traffic_provider_id', '=', current.id).execute();
        const now = nowIso();
        if (items.length) {
          await tx
            .insertInto('provider_postbacks')
            .values(
              items.map((p) => ({
                id: newId(),
                traffic_provider_id: current.id,
                campaign_id: p.campaign_id,
                event_type: p.event_type,
                url: p.url,
                created_at: now,
              })),
            )
            .execute();
        }
        await syncPostbackSubscriptions(tx, current.id);
        await audit(tx, req, {
          action: 'traffic_provider.postbacks_updated',
          target_type: 'traffic_provider',
          target_id: current.id,
          details: { before, after: items },
        });
      });
      return { postbacks: await list(current.id) };
    },
  );

  app.post(
    '/api/traffic-providers/:id/postbacks/test',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'testProviderPostback',
        tags: TAGS,
        summary: 'Send a test postback',
        description:
          'Calls the postback the provider has for this event (and campaign) once, now, with the macros filled from one of its leads or a sample lead, and answers what happened. Nothing is stored.',
        params: IdParams,
        body: TestPostback,
        response: { 200: TestPostbackResult, ...problems(404, 409) },
      },
    },
    async (req) => {
      const current = await provider(req.params.id);
      const b = req.body;
      let event: Pick<StoredEvent, 'type' | 'lead_id' | 'data'> = { ...SAMPLE, type: b.event_type };
      let campaignId = b.campaign_id ?? null;
      if (b.lead_id) {
        const lead =
          (await app.db
            .selectFrom('leads')
            .select([
              'id',
              'status',
              'sale_status',
              'cost_cents',
              'country',
              'campaign_id',
              'ftd_at',
              'sub_id1',
              'sub_id2',
              'sub_id3',
              'sub_id4',
              'sub_id5',
            ])
            .where('id', '=', b.lead_id)
            .where('traffic_provider_id', '=', current.id)
            .executeTakeFirst()) ?? notFound('lead of this traffic provider');
        const { id, ...data } = lead;
        event = { type: b.event_type, lead_id: id, data };
        campaignId = lead.campaign_id;
      }
      const rows = await postbackRows(app.db, [current.id]);
      const template =
        templateFor(rows, current.id, b.event_type, campaignId) ??
        conflict(`This traffic provider has no postback for ${b.event_type}${campaignId ? ' and that campaign' : ''}.`);
      const target = postbackUrl(template, event);
      const url = 'refused' in target ? conflict(`This postback is ${target.refused}.`) : target.url;
      const r = await sendHttp(
        testAgent(),
        { method: 'GET', url, headers: { 'user-agent': 'Leadgate-Postback' }, body: null },
        "the provider's tracker",
      );
      return {
        url,
        ok: r.ok,
        http_status: r.status,
        error: r.error,
        response_excerpt: r.excerpt,
        duration_ms: r.duration_ms,
      };
    },
  );

  deliveryLogRoutes(app, {
    kind: 'postback',
    base: '/api/traffic-providers/:id/postbacks',
    tags: TAGS,
    what: 'Provider postbacks',
    operation: 'ProviderPostback',
    view: 'traffic_providers:view',
    edit: 'traffic_providers:edit',
    retryAction: 'traffic_provider.postback_retried',
    find: async (id) => {
      const p = await provider(id);
      return { id: p.id, active: true };
    },
    payload: async (id, event) => {
      const rows = await postbackRows(app.db, [id]);
      const template = templateFor(rows, id, event.type, event.campaign_id);
      if (!template) return '(no postback for this event any more)';
      const target = postbackUrl(template, event);
      return 'refused' in target ? `(${target.refused})` : target.url;
    },
  });
}
