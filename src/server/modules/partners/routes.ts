import { Type } from 'typebox';
import { issueToken } from '../../auth/credentials.js';
import { isPostgres } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import { storedDeal } from '../../distribution/prices.js';
import type { App } from '../../types.js';
import { audit } from '../audit/service.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import {
  findPartner,
  listPartners,
  liveFlowsUsing,
  partnerReferenced,
  storedIntegration,
  toPartner,
} from './queries.js';
import { CreatePartner, Partner, PartnerListQuery, PartnerWithToken, UpdatePartner } from './schemas.js';
import { checkPartnerRules, integrationForAudit, partnerBodyChecks, resolveIntegration } from './service.js';
import testPartnerRoute from './test-lead.js';

const TAGS = ['Partners'];
/** Absolute under the hosting panel's public base URL when one is set, else a path. */
const postbackUrl = async (app: App, token: string) =>
  publicLink(await readPublicBaseUrl(app.db), `/api/postback/${token}`);

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
    async (req) => listPartners(app.db, req.query),
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
    async (req) => toPartner((await findPartner(app.db, req.params.id)) ?? notFound('partner')),
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
    async (req, reply) => {
      const b = req.body;
      const errors: FieldError[] = [];
      const working_hours = b.working_hours ?? null;
      const daily_cap = b.daily_cap ?? null;
      const hourly_cap = b.hourly_cap ?? null;
      const total_cap = b.total_cap ?? null;
      checkPartnerRules({ working_hours, daily_cap, hourly_cap, total_cap, deal: b.deal }, errors);
      const integration = resolveIntegration(b.integration, null, errors, app.config.partnerAllowedNetworks);
      if (errors.length) invalid(errors);
      const token = issueToken('lgp_');
      const now = nowIso();
      const row = {
        id: newId(),
        name: b.name.trim(),
        status: b.status ?? 'active',
        countries: JSON.stringify(b.countries ?? []),
        working_hours: working_hours ? JSON.stringify(working_hours) : null,
        daily_cap,
        hourly_cap,
        total_cap,
        deal: b.deal ? JSON.stringify(storedDeal(b.deal)) : null,
        pause_after_failures: b.pause_after_failures ?? null,
        consecutive_failures: 0,
        integration: JSON.stringify(integration),
        postback_token_id: token.id,
        created_at: now,
        updated_at: now,
        archived_at: null,
      };
      await app.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('partners')
          .values({ ...row, postback_token_hash: token.secretHash })
          .execute();
        await audit(tx, req, {
          action: 'partner.created',
          target_type: 'partner',
          target_id: row.id,
          details: { name: row.name, status: row.status, integration: integrationForAudit(integration) },
        });
      });
      return reply
        .status(201)
        .send({ ...toPartner(row), postback_token: token.token, postback_url: await postbackUrl(app, token.token) });
    },
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
    async (req) => {
      const b = req.body;
      return app.db.transaction().execute(async (tx) => {
        const current = (await findPartner(tx, req.params.id)) ?? notFound('partner');
        if (current.archived_at)
          conflict('This partner is archived (deleted while leads refer to it) and cannot be changed.');
        const errors: FieldError[] = [];
        const merged = {
          working_hours:
            b.working_hours !== undefined
              ? b.working_hours
              : current.working_hours
                ? JSON.parse(current.working_hours)
                : null,
          daily_cap: b.daily_cap !== undefined ? b.daily_cap : current.daily_cap,
          hourly_cap: b.hourly_cap !== undefined ? b.hourly_cap : current.hourly_cap,
          total_cap: b.total_cap !== undefined ? b.total_cap : current.total_cap,
        };
        checkPartnerRules({ ...merged, deal: b.deal }, errors);
        const integration = b.integration
          ? resolveIntegration(b.integration, storedIntegration(current), errors, app.config.partnerAllowedNetworks)
          : undefined;
        if (errors.length) invalid(errors);
        const patch = {
          ...(b.name !== undefined ? { name: b.name.trim() } : {}),
          ...(b.status !== undefined ? { status: b.status } : {}),
          ...(b.countries !== undefined ? { countries: JSON.stringify(b.countries) } : {}),
          ...(b.working_hours !== undefined
            ? { working_hours: b.working_hours ? JSON.stringify(b.working_hours) : null }
            : {}),
          ...(b.daily_cap !== undefined ? { daily_cap: b.daily_cap } : {}),
          ...(b.hourly_cap !== undefined ? { hourly_cap: b.hourly_cap } : {}),
          ...(b.total_cap !== undefined ? { total_cap: b.total_cap } : {}),
          ...(b.deal !== undefined ? { deal: b.deal ? JSON.stringify(storedDeal(b.deal)) : null } : {}),
          ...(b.pause_after_failures !== undefined ? { pause_after_failures: b.pause_after_failures } : {}),
          // Turned on again by an operator: the count starts over.
          ...(b.status === 'active' && current.status !== 'active' ? { consecutive_failures: 0 } : {}),
          ...(integration ? { integration: JSON.stringify(integration) } : {}),
          updated_at: nowIso(),
        };
        await tx.updateTable('partners').set(patch).where('id', '=', current.id).execute();
        const { integration: _secret, ...plain } = b;
        await audit(tx, req, {
          action: 'partner.updated',
          target_type: 'partner',
          target_id: current.id,
          details: {
            name: current.name,
            changes: { ...plain, ...(integration ? { integration: integrationForAudit(integration) } : {}) },
          },
        });
        return toPartner({ ...current, ...patch });
      });
    },
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
    async (req) => {
      const token = issueToken('lgp_');
      const url = await postbackUrl(app, token.token); // before the transaction: SQLite has one connection
      return app.db.transaction().execute(async (tx) => {
        const current = (await findPartner(tx, req.params.id)) ?? notFound('partner');
        if (current.archived_at)
          conflict('This partner is archived (deleted while leads refer to it) and cannot be changed.');
        const patch = { postback_token_id: token.id, updated_at: nowIso() };
        await tx
          .updateTable('partners')
          .set({ ...patch, postback_token_hash: token.secretHash })
          .where('id', '=', current.id)
          .execute();
        await audit(tx, req, {
          action: 'partner.postback_token_rotated',
          target_type: 'partner',
          target_id: current.id,
          details: { name: current.name },
        });
        return { ...toPartner({ ...current, ...patch }), postback_token: token.token, postback_url: url };
      });
    },
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
      await app.db.transaction().execute(async (tx) => {
        // Lock the row first (PostgreSQL): a flow or campaign being pointed at it meanwhile holds
        // a share lock, so the usage check below sees every reference committed before it.
        if (isPostgres(tx))
          await tx.selectFrom('partners').select('id').where('id', '=', req.params.id).forUpdate().execute();
        const current = (await findPartner(tx, req.params.id)) ?? notFound('partner');
        const flows = await liveFlowsUsing(tx, current.id);
        if (flows.length)
          conflict(`Flows still route to this partner: ${flows.join(', ')}. Remove it from them first.`);
        if (await partnerReferenced(tx, current.id)) {
          if (current.archived_at) return; // already archived: nothing to do
          await tx.updateTable('partners').set({ archived_at: nowIso() }).where('id', '=', current.id).execute();
          await audit(tx, req, {
            action: 'partner.archived',
            target_type: 'partner',
            target_id: current.id,
            details: { name: current.name },
          });
        } else {
          await tx.deleteFrom('partners').where('id', '=', current.id).execute();
          await audit(tx, req, {
            action: 'partner.deleted',
            target_type: 'partner',
            target_id: current.id,
            details: { name: current.name },
          });
        }
      });
      return reply.status(204).send(null);
    },
  );

  await testPartnerRoute(app);
}
