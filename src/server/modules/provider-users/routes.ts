import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import { Page, PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { mailSetupOf } from './invitation-mail.js';
import {
  InviteProviderUser,
  PortalApiKey,
  ProviderUser,
  ProviderUserInvited,
  UpdateProviderUser,
  ViewAsSession,
} from './schemas.js';
import {
  inviteProviderUser,
  listProviderUsers,
  listUserKeys,
  renewInvitation,
  revokeUserKey,
  updateProviderUser,
  viewAsProvider,
} from './service.js';

const TAGS = ['Traffic providers'];
const Id = Type.String({ minLength: 1, maxLength: 64 });
const ProviderParams = Type.Object({ id: Id });
const UserParams = Type.Object({ id: Id, user_id: Id });
const KeyParams = Type.Object({ id: Id, user_id: Id, key_id: Id });

// The operators' side of a traffic provider's portal: its users and their keys, and "View as provider".
export default async function providerUsersRoutes(app: App) {
  app.post(
    '/api/traffic-providers/:id/users',
    {
      // An invitation is a person's credential: made from a signed-in session, never by a key.
      config: { permission: 'traffic_providers:edit', sessionOnly: true },
      schema: {
        operationId: 'inviteProviderUser',
        tags: TAGS,
        summary: "Invite a user to the provider's portal",
        description:
          'Answers the one-time `invitation_token` and the link to hand over (both shown once; valid 7 days). ' +
          'The user opens it, sets a password (POST /api/portal/invitations/accept) and signs in on the usual sign-in page. ' +
          'An email that already signs in (an operator or another provider user) is a 409. ' +
          'When the host sets up a mail server (SMTP_URL), the link is also mailed to the user after the invitation is saved; ' +
          '`mail` says whether it was (`sent`, `failed` with why, or `not_configured`). The link works either way.',
        params: ProviderParams,
        body: InviteProviderUser,
        response: { 201: ProviderUserInvited, ...problems(404, 409) },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await inviteProviderUser(app.db, actorOf(req), req.params.id, req.body, mailSetupOf(app.config))),
  );

  app.get(
    '/api/traffic-providers/:id/users',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'listProviderUsers',
        tags: TAGS,
        summary: "The provider's portal users",
        params: ProviderParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(ProviderUser, 'ProviderUserPage'), ...problems(404) },
      },
    },
    async (req) => listProviderUsers(app.db, actorOf(req), req.params.id, req.query),
  );

  app.patch(
    '/api/traffic-providers/:id/users/:user_id',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'updateProviderUser',
        tags: TAGS,
        summary: 'Disable or enable a portal user',
        description:
          '`{"status": "disabled"}` ends its sessions and revokes its keys at once, on every server. ' +
          '`{"status": "active"}` lets it sign in again (or accept its invitation, if it never did: renew it then).',
        params: UserParams,
        body: UpdateProviderUser,
        response: { 200: ProviderUser, ...problems(404) },
      },
    },
    async (req) => updateProviderUser(app.db, actorOf(req), req.params.id, req.params.user_id, req.body),
  );

  app.post(
    '/api/traffic-providers/:id/users/:user_id/invitation',
    {
      // An invitation is a person's credential: made from a signed-in session, never by a key.
      config: { permission: 'traffic_providers:edit', sessionOnly: true },
      schema: {
        operationId: 'renewProviderUserInvitation',
        tags: TAGS,
        summary: 'A new invitation link for a user who has not accepted yet',
        description:
          'The old link stops working. Shown once; valid 7 days; mailed like an invitation (`mail`). 409 once the user has set a password.',
        params: UserParams,
        response: { 201: ProviderUserInvited, ...problems(404, 409) },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await renewInvitation(app.db, actorOf(req), req.params.id, req.params.user_id, mailSetupOf(app.config))),
  );

  app.get(
    '/api/traffic-providers/:id/users/:user_id/api-keys',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'listProviderUserApiKeys',
        tags: TAGS,
        summary: "A portal user's API keys",
        params: UserParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(PortalApiKey, 'PortalApiKeyPage'), ...problems(404) },
      },
    },
    async (req) => listUserKeys(app.db, actorOf(req), req.params.id, req.params.user_id, req.query),
  );

  app.delete(
    '/api/traffic-providers/:id/users/:user_id/api-keys/:key_id',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'revokeProviderUserApiKey',
        tags: TAGS,
        summary: "Revoke a portal user's API key",
        description: 'It stops working at once, on every server. The record stays, with revoked_at.',
        params: KeyParams,
        response: { 200: PortalApiKey, ...problems(404) },
      },
    },
    async (req) => revokeUserKey(app.db, actorOf(req), req.params.id, req.params.user_id, req.params.key_id),
  );

  app.post(
    '/api/traffic-providers/:id/view-as',
    {
      // It makes a session, so it is a write: traffic_providers:edit (and leads:view, checked in the use case).
      config: { permission: 'traffic_providers:edit', sessionOnly: true },
      schema: {
        operationId: 'viewAsProvider',
        tags: TAGS,
        summary: 'View the portal as this provider sees it (read only)',
        description:
          'A read-only portal session for the dashboard to open the portal with. Needs `leads:view` as well. Audited.',
        params: ProviderParams,
        response: { 201: ViewAsSession, ...problems(404) },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(
          await viewAsProvider(
            app.db,
            actorOf(req),
            req.params.id,
            req.headers['user-agent'] ?? '',
            app.config.sessionIdleMinutes,
          ),
        ),
  );
}
