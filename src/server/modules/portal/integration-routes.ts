import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { DeliveryListQuery, EventDelivery, EventDeliveryDetail } from '../../events/schemas.js';
import { RETENTION_DAYS } from '../../events/dispatcher.js';
import { problems } from '../../http/openapi.js';
import { Page, PageQuery } from '../../http/pagination.js';
import { onDemandAgent } from '../../outbound/guard.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { PostbackList, PutPostbacks, TestPostback, TestPostbackResult } from '../provider-postbacks/schemas.js';
import { IntakeDocs, PortalCampaign, RotatedIntakeToken } from './integration-schemas.js';
import {
  getPortalPostbackDelivery,
  getPortalPostbacks,
  listPortalCampaigns,
  listPortalPostbackDeliveries,
  portalCampaignDocs,
  putPortalPostbacks,
  rotatePortalIntakeToken,
  testPortalPostback,
} from './integration-service.js';

const TAGS = ['Portal'];

const DeliveryIdParams = Type.Object(
  { deliveryId: Type.String({ minLength: 1, maxLength: 18, pattern: '^[0-9]+$' }) },
  { additionalProperties: false },
);

// The portal's integration (issue 27): campaigns and their intake documentation, the intake
// token, postbacks with their delivery log and a test send. All of the principal's own provider.
export default async function portalIntegrationRoutes(app: App) {
  // The test send's own pool, through the outbound guard with the same rules as real sends.
  const testAgent = onDemandAgent(app, app.config.partnerAllowedNetworks);

  app.get(
    '/api/portal/campaigns',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'listPortalCampaigns',
        tags: TAGS,
        summary: 'Your campaigns, with their countries and payout',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(PortalCampaign, 'PortalCampaignPage') },
      },
    },
    async (req) => listPortalCampaigns(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/portal/campaigns/:id/docs',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalCampaignDocs',
        tags: TAGS,
        summary: 'How to post leads to a campaign',
        description:
          'Generated from the intake itself: the URL, every field (required, format, example), the headers, a curl example and every answer it can give.',
        params: IdParams,
        response: { 200: IntakeDocs, ...problems(404) },
      },
    },
    async (req) => portalCampaignDocs(app.db, actorOf(req), req.params.id),
  );

  app.post(
    '/api/portal/intake-token/rotate',
    {
      config: { portal: 'portal:edit', sessionOnly: true },
      schema: {
        operationId: 'rotatePortalIntakeToken',
        tags: TAGS,
        summary: 'Replace your intake token (shown once)',
        description:
          'The new token is shown only in this answer; the old one stops working at once. From a signed-in session only (403 `session_required` for a key). 409 when your account is archived.',
        response: { 200: RotatedIntakeToken, ...problems(409) },
      },
    },
    async (req) => rotatePortalIntakeToken(app.db, actorOf(req)),
  );

  app.get(
    '/api/portal/postbacks',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalPostbacks',
        tags: TAGS,
        summary: 'Your postbacks (calls to your tracker on lead events)',
        response: { 200: PostbackList },
      },
    },
    async (req) => getPortalPostbacks(app.db, actorOf(req)),
  );

  app.put(
    '/api/portal/postbacks',
    {
      config: { portal: 'portal:edit' },
      schema: {
        operationId: 'putPortalPostbacks',
        tags: TAGS,
        summary: 'Set your postbacks',
        description:
          "Replaces them all. Each event of your leads then calls its URL (GET), at least once, in order per lead, retried for 24 hours. A campaign's own postback replaces the one for every campaign for that event.",
        body: PutPostbacks,
        response: { 200: PostbackList, ...problems(409) },
      },
    },
    async (req) => putPortalPostbacks(app.db, actorOf(req), req.body.postbacks, app.config.partnerAllowedNetworks),
  );

  app.post(
    '/api/portal/postbacks/test',
    {
      config: { portal: 'portal:edit' },
      schema: {
        operationId: 'testPortalPostback',
        tags: TAGS,
        summary: 'Send a test postback',
        description:
          'Calls your postback for this event (and campaign) once, now, with the macros filled from one of your leads or a sample lead, and answers what happened. Nothing is stored.',
        body: TestPostback,
        response: { 200: TestPostbackResult, ...problems(404, 409) },
      },
    },
    async (req) => testPortalPostback(app.db, testAgent, actorOf(req), req.body),
  );

  app.get(
    '/api/portal/postbacks/deliveries',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'listPortalPostbackDeliveries',
        tags: TAGS,
        summary: 'Your postbacks: delivery log',
        description: `Newest first; kept ${RETENTION_DAYS} days.`,
        querystring: DeliveryListQuery,
        response: { 200: Page(EventDelivery, 'PortalPostbackDeliveryPage') },
      },
    },
    async (req) => listPortalPostbackDeliveries(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/portal/postbacks/deliveries/:deliveryId',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalPostbackDelivery',
        tags: TAGS,
        summary: 'Your postbacks: one delivery, with the answer of each try',
        params: DeliveryIdParams,
        response: { 200: EventDeliveryDetail, ...problems(404) },
      },
    },
    async (req) => getPortalPostbackDelivery(app.db, actorOf(req), req.params.deliveryId),
  );
}
