import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import {
  CreatePartner,
  Partner,
  PartnerHealthList,
  PartnerListQuery,
  PartnerWithToken,
  UpdatePartner,
} from './schemas.js';
import {
  createPartner,
  deletePartner,
  getPartner,
  listPartners,
  partnerHealth,
  rotatePartnerPostbackToken,
  updatePartner,
} from './service.js';
import { partnerBodyChecks } from './checks.js';
import testPartnerRoute from './test-lead.js';
import { PARTNER_TEMPLATES, PartnerTemplate } from './templates.js';

const TAGS = ['Partners'];

export default async function partnersRoutes(app: App) {
  app.get(
    '/api/partners',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'listPartners',
        tags: TAGS,
        summary: 'Partners (buyers)',
        description: 'Oldest first. Archived partners are left out unless include_archived=true.',
        querystring: PartnerListQuery,
        response: { 200: Page(Partner, 'PartnerPage') },
      },
    },
    async (req) => listPartners(app.db, req.query, principalOf(req).scope),
  );

  app.get(
    '/api/partners/health',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'partnerHealth',
        tags: TAGS,
        summary: "Partners' health: failing, capped, paused",
        description:
          'Every partner not archived, failing first, then capped, paused and ok: its failed calls in a row, ' +
          "its calls today (its own day, the one its daily cap counts) by outcome, its own caps' fill and its " +
          'latest call. Pause or resume one with PATCH /api/partners/{id} {"status": …}.',
        response: { 200: PartnerHealthList },
      },
    },
    async (req) => partnerHealth(app.db, Date.now(), principalOf(req).scope),
  );

  app.get(
    '/api/partners/templates',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'listPartnerTemplates',
        tags: TAGS,
        summary: 'Ready integrations for common broker APIs',
        description:
          'Integrations for the usual broker API shapes (JSON POST with a token header, form POST, query-string GET), ' +
          'with the field names forex/crypto CRMs use. Each lacks its URL and its token header value: give both when ' +
          'creating the partner (POST /api/partners with the integration filled in).',
        response: { 200: Type.Object({ data: Type.Array(PartnerTemplate) }, { title: 'PartnerTemplateList' }) },
      },
    },
    async () => ({ data: PARTNER_TEMPLATES }),
  );

  app.get(
    '/api/partners/:id',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'getPartner',
        tags: TAGS,
        summary: 'One partner',
        description: 'Archived partners are still readable here, with archived_at set.',
        params: IdParams,
        response: { 200: Partner, ...problems(404) },
      },
    },
    async (req) => getPartner(app.db, req.params.id, principalOf(req).scope),
  );

  app.post(
    '/api/partners',
    {
      config: {
        permission: 'partners:edit',
        moreChecks: (body) => partnerBodyChecks(body, app.config.partnerAllowedNetworks),
      },
      schema: {
        operationId: 'createPartner',
        tags: TAGS,
        summary: 'Create a partner',
        description:
          'The answer carries the postback token (postback_token, lgp_…) and postback_url once; no other ' +
          'answer shows them again (rotate the token to get a new one). Header values are write-only. A URL whose ' +
          'host is a loopback, private, link-local or other non-public address (outside PARTNER_ALLOWED_NETWORKS) ' +
          'is refused (400); host names are checked when a call connects.',
        body: CreatePartner,
        response: { 201: PartnerWithToken },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await createPartner(app.db, actorOf(req), req.body, app.config.partnerAllowedNetworks)),
  );

  app.patch(
    '/api/partners/:id',
    {
      config: {
        permission: 'partners:edit',
        moreChecks: (body) => partnerBodyChecks(body, app.config.partnerAllowedNetworks),
      },
      schema: {
        operationId: 'updatePartner',
        tags: TAGS,
        summary: 'Change a partner',
        description:
          'Changes only the fields sent. `integration`, when sent, replaces the whole integration ' +
          '(left-out integration fields take their defaults), except that a header value sent back ' +
          'exactly as answers show it (masked) keeps the stored value of that header, as long as the URL keeps ' +
          'its scheme, host and port (otherwise 400: re-enter the secret for the new destination); any other value ' +
          'replaces it, and a header left out is removed. A URL whose host is a loopback, private, link-local or ' +
          'other non-public address (outside PARTNER_ALLOWED_NETWORKS) is refused (400). An archived partner cannot be changed (409).',
        params: IdParams,
        body: UpdatePartner,
        response: { 200: Partner, ...problems(404, 409) },
      },
    },
    async (req) => updatePartner(app.db, actorOf(req), req.params.id, req.body, app.config.partnerAllowedNetworks),
  );

  app.post(
    '/api/partners/:id/rotate-postback-token',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'rotatePartnerPostbackToken',
        tags: TAGS,
        summary: "Replace a partner's postback token",
        description:
          'Issues a new postback token, shown once in this answer with its postback_url. The old token ' +
          'stops working at once: give the partner the new URL. An archived partner cannot be changed (409).',
        params: IdParams,
        response: { 200: PartnerWithToken, ...problems(404, 409) },
      },
    },
    async (req) => rotatePartnerPostbackToken(app.db, actorOf(req), req.params.id),
  );

  app.delete(
    '/api/partners/:id',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'deletePartner',
        tags: TAGS,
        summary: 'Delete (or archive) a partner',
        description:
          'A partner that a flow (not archived) still routes to is refused with 409 `conflict` naming ' +
          'the flows: remove it from them first. Otherwise, if leads or delivery attempts refer to it, it ' +
          'is archived (204): left out of lists unless include_archived=true, still readable by id with ' +
          'archived_at, refused as a new flow target, and no longer changeable. If nothing refers to it, ' +
          'it is deleted (204).',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted or archived' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      await deletePartner(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );

  await testPartnerRoute(app);
}
