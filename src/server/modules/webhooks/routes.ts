import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { onDemandAgent } from '../../outbound/guard.js';
import { actorOf } from '../audit/service.js';
import { CreateWebhook, EventTypeInfo, TestEventResult, UpdateWebhook, Webhook, WebhookWithSecret } from './schemas.js';
import { sendTestEvent } from './test-event.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listEventTypes,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
  webhookDestinationState,
  webhookPayload,
} from './service.js';
import { deliveryLogRoutes } from '../delivery-log/routes.js';

const TAGS = ['Webhooks'];

export default async function webhookRoutes(app: App) {
  app.get(
    '/api/webhooks',
    {
      config: { permission: 'webhooks:view' },
      schema: {
        operationId: 'listWebhooks',
        tags: TAGS,
        summary: 'Webhooks',
        description: 'Oldest first. Never shows a signing secret.',
        response: { 200: Page(Webhook, 'WebhookPage') },
      },
    },
    async () => ({ data: await listWebhooks(app.db), next_cursor: null }),
  );

  app.get(
    '/api/webhooks/event-types',
    {
      config: { permission: 'webhooks:view' },
      schema: {
        operationId: 'listWebhookEventTypes',
        tags: TAGS,
        summary: 'Event types a webhook can send',
        description:
          "Every event type, with the permission a webhook's owner must hold for it to be sent (a webhook sends with its owner's rights).",
        response: { 200: Type.Object({ data: Type.Array(EventTypeInfo) }, { title: 'EventTypeList' }) },
      },
    },
    async () => ({ data: listEventTypes() }),
  );

  app.get(
    '/api/webhooks/:id',
    {
      config: { permission: 'webhooks:view' },
      schema: {
        operationId: 'getWebhook',
        tags: TAGS,
        summary: 'One webhook',
        params: IdParams,
        response: { 200: Webhook, ...problems(404) },
      },
    },
    async (req) => getWebhook(app.db, req.params.id),
  );

  app.post(
    '/api/webhooks',
    {
      config: { permission: 'webhooks:edit' },
      schema: {
        operationId: 'createWebhook',
        tags: TAGS,
        summary: 'Create a webhook',
        description:
          'Events of the chosen types are POSTed to the URL, at least once, in order per lead, retried with exponential backoff for 24 hours. ' +
          'Each request carries webhook-id (the same on every try), webhook-timestamp and webhook-signature (Standard Webhooks). ' +
          'The answer carries the signing secret once. ' +
          'Each event type needs the permission to read it (lead events: leads:view; partner alerts: partners:view; …): one you may not read is refused with 403, naming it. ' +
          'The webhook then sends as you (owner_id): an event its owner may no longer read is not sent.',
        body: CreateWebhook,
        response: { 201: WebhookWithSecret },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await createWebhook(app.db, actorOf(req), req.body, app.config.partnerAllowedNetworks)),
  );

  app.patch(
    '/api/webhooks/:id',
    {
      config: { permission: 'webhooks:edit' },
      schema: {
        operationId: 'updateWebhook',
        tags: TAGS,
        summary: 'Change a webhook',
        description:
          'Changes only the fields sent. Disabling cancels its pending deliveries; enabling again clears failing_since. ' +
          'Changing where or what it sends (url, format, telegram_chat_id, event_types, or enabling it) needs the permission to read every event type it will send ' +
          '(403 naming those you may not read), and makes you its owner.',
        params: IdParams,
        body: UpdateWebhook,
        response: { 200: Webhook, ...problems(404) },
      },
    },
    async (req) => updateWebhook(app.db, actorOf(req), req.params.id, req.body, app.config.partnerAllowedNetworks),
  );

  app.delete(
    '/api/webhooks/:id',
    {
      config: { permission: 'webhooks:edit' },
      schema: {
        operationId: 'deleteWebhook',
        tags: TAGS,
        summary: 'Delete a webhook',
        description: 'Its pending deliveries are cancelled; its delivery log goes with it.',
        params: IdParams,
        response: { 204: Type.Null(), ...problems(404) },
      },
    },
    async (req, reply) => {
      await deleteWebhook(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/webhooks/:id/rotate-secret',
    {
      config: { permission: 'webhooks:edit' },
      schema: {
        operationId: 'rotateWebhookSecret',
        tags: TAGS,
        summary: 'New signing secret',
        description:
          'The old secret stops signing at once (tries already in flight may still carry its signature). The answer carries the new secret once.',
        params: IdParams,
        response: { 200: WebhookWithSecret, ...problems(404) },
      },
    },
    async (req) => rotateWebhookSecret(app.db, actorOf(req), req.params.id),
  );

  // The test send's own pool, through the outbound guard with the same rules as real sends.
  const testAgent = onDemandAgent(app, app.config.partnerAllowedNetworks);

  app.post(
    '/api/webhooks/:id/test',
    {
      config: { permission: 'webhooks:edit' },
      schema: {
        operationId: 'sendWebhookTestEvent',
        tags: TAGS,
        summary: 'Send a test event',
        description:
          'Sends one signed test event (type webhook.test, webhook-id evt_test_…; for slack and telegram a one-line message) to the ' +
          "webhook now, as events are sent (its secret's signature, the outbound guard, no redirects, 10 s), and answers what the " +
          'receiver said and how long it took. Sent whether the webhook is active or disabled. Nothing is stored.',
        params: IdParams,
        response: { 200: TestEventResult, ...problems(404) },
      },
    },
    async (req) => sendTestEvent(app.db, testAgent, req.params.id),
  );

  deliveryLogRoutes(app, {
    kind: 'webhook',
    base: '/api/webhooks/:id',
    tags: TAGS,
    what: 'Webhook',
    operation: 'Webhook',
    view: 'webhooks:view',
    edit: 'webhooks:edit',
    retryAction: 'webhook.delivery_retried',
    find: (id) => webhookDestinationState(app.db, id),
    payload: (id, event) => webhookPayload(app.db, id, event),
  });
}
