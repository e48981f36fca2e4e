import { Type } from 'typebox';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/tables.js';
import { newId, nowIso } from '../../db/ids.js';
import { IdParams } from '../../http/common-schemas.js';
import { invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { checkDestinationUrl } from '../../outbound/guard.js';
import { audit } from '../audit/service.js';
import { CreateWebhook, UpdateWebhook, Webhook, WebhookWithSecret } from './schemas.js';
import {
  cancelPending,
  eventNames,
  newSecret,
  NO_NAMES,
  renderBody,
  storedEventTypes,
  syncSubscriptions,
  toWebhook,
  urlProblem,
} from './service.js';
import { deliveryLogRoutes } from '../../events/delivery-routes.js';
import { assertCanRead } from './access.js';
import { safeEvents } from '../../events/safe-events.js';

const TAGS = ['Webhooks'];

export default async function webhookRoutes(app: App) {
  const find = async (id: string, db: Kysely<Database> = app.db) =>
    (await db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst()) ?? notFound('webhook');

  /** URL and chat id checks beyond the schema, named by field. */
  const check = (
    b: { url?: string; format?: string; telegram_chat_id?: string | null },
    format: string,
    chatId: string | null,
  ) => {
    const errors: FieldError[] = [];
    if (b.url !== undefined) {
      const problem =
        urlProblem(b.url) ?? checkDestinationUrl(b.url, app.config.partnerAllowedNetworks)?.message ?? null;
      if (problem) errors.push({ field: 'url', message: problem });
    }
    if (format === 'telegram' && !chatId)
      errors.push({ field: 'telegram_chat_id', message: 'is required for the telegram format' });
    if (format !== 'telegram' && chatId)
      errors.push({ field: 'telegram_chat_id', message: 'is only for the telegram format' });
    if (errors.length) invalid(errors);
  };

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
    async () => ({
      data: (await app.db.selectFrom('webhooks').selectAll().orderBy('created_at').orderBy('id').execute()).map(
        toWebhook,
      ),
      next_cursor: null,
    }),
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
    async (req) => toWebhook(await find(req.params.id)),
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
    async (req, reply) => {
      const b = req.body;
      const format = b.format ?? 'json';
      check(b, format, b.telegram_chat_id ?? null);
      const principal = principalOf(req);
      assertCanRead(principal, b.event_types);
      const now = nowIso();
      const row = {
        id: newId(),
        name: b.name.trim(),
        url: b.url,
        format,
        telegram_chat_id: b.telegram_chat_id ?? null,
        event_types: JSON.stringify(b.event_types),
        secret: newSecret(),
        status: 'active' as const,
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
        owner_id: principal.operator.id,
      };
      await app.db.transaction().execute(async (tx) => {
        await tx.insertInto('webhooks').values(row).execute();
        await syncSubscriptions(tx, row);
        await audit(tx, req, {
          action: 'webhook.created',
          target_type: 'webhook',
          target_id: row.id,
          details: { name: row.name, url: toWebhook(row).url, format, event_types: b.event_types },
        });
      });
      return reply.status(201).send({ ...toWebhook(row), secret: row.secret });
    },
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
    async (req) => {
      const b = req.body;
      return app.db.transaction().execute(async (tx) => {
        const current = await find(req.params.id, tx);
        const format = b.format ?? current.format;
        const chatId =
          b.telegram_chat_id !== undefined
            ? b.telegram_chat_id
            : format === 'telegram'
              ? current.telegram_chat_id
              : null;
        check(b, format, chatId);
        // Whoever redirects a webhook reads what it sends from then on: they must be allowed to, and it sends as them.
        const redirects =
          b.url !== undefined ||
          b.format !== undefined ||
          b.telegram_chat_id !== undefined ||
          b.event_types !== undefined ||
          b.status === 'active';
        const principal = principalOf(req);
        if (redirects) assertCanRead(principal, b.event_types ?? storedEventTypes(current));
        const reactivated = b.status === 'active' && current.status !== 'active';
        const patch = {
          ...(b.name !== undefined && { name: b.name.trim() }),
          ...(b.url !== undefined && { url: b.url }),
          format,
          telegram_chat_id: chatId,
          ...(b.event_types && { event_types: JSON.stringify(b.event_types) }),
          ...(b.status && { status: b.status }),
          ...(b.status && { disabled_reason: null }),
          ...(reactivated && { failing_since: null }),
          ...(redirects && { owner_id: principal.operator.id }),
          updated_at: nowIso(),
        };
        const row = { ...current, ...patch };
        await tx.updateTable('webhooks').set(patch).where('id', '=', current.id).execute();
        await syncSubscriptions(tx, row);
        if (row.status !== 'active' && current.status === 'active')
          await cancelPending(tx, current.id, 'the webhook was disabled');
        const { url: _url, ...changed } = b;
        await audit(tx, req, {
          action: 'webhook.updated',
          target_type: 'webhook',
          target_id: current.id,
          details: { ...changed, ...(b.url !== undefined && { url: toWebhook(row).url }) },
        });
        return toWebhook(row);
      });
    },
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
      await app.db.transaction().execute(async (tx) => {
        const current = await find(req.params.id, tx);
        await tx
          .deleteFrom('event_subscriptions')
          .where('destination_kind', '=', 'webhook')
          .where('destination_id', '=', current.id)
          .execute();
        await tx
          .deleteFrom('event_deliveries')
          .where('destination_kind', '=', 'webhook')
          .where('destination_id', '=', current.id)
          .execute();
        await tx.deleteFrom('webhooks').where('id', '=', current.id).execute();
        await audit(tx, req, {
          action: 'webhook.deleted',
          target_type: 'webhook',
          target_id: current.id,
          details: { name: current.name },
        });
      });
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
    async (req) => {
      const current = await find(req.params.id);
      const row = { ...current, secret: newSecret(), updated_at: nowIso() };
      await app.db.transaction().execute(async (tx) => {
        await tx
          .updateTable('webhooks')
          .set({ secret: row.secret, updated_at: row.updated_at })
          .where('id', '=', current.id)
          .execute();
        await audit(tx, req, {
          action: 'webhook.secret_rotated',
          target_type: 'webhook',
          target_id: current.id,
          details: { name: current.name },
        });
      });
      return { ...toWebhook(row), secret: row.secret };
    },
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
    find: async (id) => {
      const hook = await find(id);
      return { id: hook.id, active: hook.status === 'active' };
    },
    payload: async (id, event) => {
      const hook = await find(id);
      const names = hook.format === 'json' ? NO_NAMES : (await eventNames(app.db, [event]))(event);
      return renderBody(hook.format, hook.telegram_chat_id, (await safeEvents(app.db, [event]))(event), names);
    },
  });
}
