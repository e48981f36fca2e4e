import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page, PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { PortalApiKey } from '../provider-users/schemas.js';
import portalLeadRoutes from './leads-routes.js';
import { PatchPortalMe } from './leads-schemas.js';
import {
  acceptInvitation,
  createPortalKey,
  listPortalKeys,
  me,
  portalLogout,
  revokeOwnPortalKey,
  updatePortalMe,
} from './service.js';
import { AcceptInvitation, CreatePortalKey, PortalMe } from './schemas.js';
import { confirmPortalTwoFactor, disablePortalTwoFactor, startPortalTwoFactor } from './two-factor.js';
import portalIntegrationRoutes from './integration-routes.js';

const TAGS = ['Portal'];

// The traffic provider's portal (issue 27): its account routes. Every route here but the
// invitation declares `portal` access: provider principals only, never an operator.
export default async function portalRoutes(app: App) {
  await app.register(portalLeadRoutes);
  await portalIntegrationRoutes(app);

  app.post(
    '/api/portal/invitations/accept',
    {
      config: { public: true, allowlistExempt: true },
      schema: {
        operationId: 'acceptPortalInvitation',
        tags: TAGS,
        summary: 'Accept an invitation: set your password',
        description:
          'The token from the invitation link works once, for 7 days. Then sign in with POST /api/auth/login. ' +
          'Tries are counted per address like sign-ins (429 with Retry-After when over).',
        body: AcceptInvitation,
        response: {
          201: Type.Object({ email: Type.String(), status: Type.Literal('active') }, { title: 'InvitationAccepted' }),
          ...problems(429),
        },
      },
    },
    async (req, reply) => reply.status(201).send(await acceptInvitation(app.db, actorOf(req), req.body)),
  );

  app.get(
    '/api/portal/me',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'portalMe',
        tags: TAGS,
        summary: 'The caller: portal user, provider, scopes and what the portal shows',
        response: { 200: PortalMe },
      },
    },
    async (req) => me(app.db, actorOf(req)),
  );

  app.patch(
    '/api/portal/me',
    {
      config: { portal: 'portal:edit' },
      schema: {
        operationId: 'updatePortalMe',
        tags: TAGS,
        summary: 'Change your name or time zone',
        description:
          'The time zone (IANA, e.g. Europe/Berlin) is the one your dates, date filters and statistics are in.',
        body: PatchPortalMe,
        response: { 200: PortalMe },
      },
    },
    async (req) => updatePortalMe(app.db, actorOf(req), req.body),
  );

  app.post(
    '/api/portal/logout',
    {
      config: { portal: 'portal:view', sessionOnly: true },
      schema: {
        operationId: 'portalLogout',
        tags: TAGS,
        summary: 'End this portal session',
        response: { 204: Type.Null({ description: 'Signed out' }) },
      },
    },
    async (req, reply) => {
      await portalLogout(app.db, actorOf(req));
      return reply.status(204).send(null);
    },
  );

  const TwoFactorState = Type.Object({ enabled: Type.Boolean() }, { title: 'PortalTwoFactorState' });
  app.post(
    '/api/portal/two-factor',
    {
      config: { portal: 'portal:edit', sessionOnly: true },
      schema: {
        operationId: 'startPortalTwoFactor',
        tags: TAGS,
        summary: 'Start two-factor sign-in: a new secret for your authenticator app',
        description:
          'Shown once. Scan `otpauth_uri` (or type `secret`), then confirm with a current code. 409 while it is on.',
        response: {
          201: Type.Object(
            { secret: Type.String(), otpauth_uri: Type.String() },
            { title: 'PortalTwoFactorEnrolment' },
          ),
          ...problems(409),
        },
      },
    },
    async (req, reply) => reply.status(201).send(await startPortalTwoFactor(app.db, actorOf(req))),
  );

  app.post(
    '/api/portal/two-factor/confirm',
    {
      config: { portal: 'portal:edit', sessionOnly: true },
      schema: {
        operationId: 'confirmPortalTwoFactor',
        tags: TAGS,
        summary: 'Turn two-factor sign-in on with a current code',
        body: Type.Object(
          { code: Type.String({ minLength: 6, maxLength: 8, pattern: '^[0-9 ]+$' }) },
          { additionalProperties: false },
        ),
        response: { 200: TwoFactorState, ...problems(409) },
      },
    },
    async (req) => confirmPortalTwoFactor(app.db, actorOf(req), req.body.code),
  );

  app.post(
    '/api/portal/two-factor/disable',
    {
      config: { portal: 'portal:edit', sessionOnly: true },
      schema: {
        operationId: 'disablePortalTwoFactor',
        tags: TAGS,
        summary: 'Turn two-factor sign-in off (your password)',
        description: 'Wrong passwords count toward the sign-in limit (429 when over).',
        body: Type.Object(
          { current_password: Type.String({ minLength: 1, maxLength: 256 }) },
          { additionalProperties: false },
        ),
        response: { 200: TwoFactorState, ...problems(429) },
      },
    },
    async (req) => disablePortalTwoFactor(app.db, actorOf(req), req.body.current_password),
  );

  app.get(
    '/api/portal/api-keys',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'listPortalApiKeys',
        tags: TAGS,
        summary: 'Your API keys',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(PortalApiKey, 'PortalApiKeyPage') },
      },
    },
    async (req) => listPortalKeys(app.db, actorOf(req), req.query),
  );

  app.post(
    '/api/portal/api-keys',
    {
      config: { portal: 'portal:edit', sessionOnly: true },
      schema: {
        operationId: 'createPortalApiKey',
        tags: TAGS,
        summary: 'Make an API key (portal scopes only; shown once)',
        description: 'From a signed-in session only (a key cannot make keys: 403 `session_required`).',
        body: CreatePortalKey,
        response: {
          201: Type.Object(
            {
              ...PortalApiKey.properties,
              secret: Type.String({ description: 'The key itself (lgpk_…). Shown only in this answer.' }),
            },
            { title: 'PortalApiKeyCreated' },
          ),
        },
      },
    },
    async (req, reply) => reply.status(201).send(await createPortalKey(app.db, actorOf(req), req.body)),
  );

  app.delete(
    '/api/portal/api-keys/:id',
    {
      config: { portal: 'portal:edit' },
      schema: {
        operationId: 'revokePortalApiKey',
        tags: TAGS,
        summary: 'Revoke one of your API keys',
        params: IdParams,
        response: { 200: PortalApiKey, ...problems(404) },
      },
    },
    async (req) => revokeOwnPortalKey(app.db, actorOf(req), req.params.id),
  );
}
