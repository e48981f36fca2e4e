import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { Email, Operator, Password, PersonName } from '../operators/schemas.js';
import { completeSetup, login, logout, setupNeeded, whoami } from './service.js';

const SessionCreated = Type.Object(
  {
    token: Type.String({
      description:
        "Session token; send as Authorization: Bearer. Shown once. An operator's (lgs_…) opens the dashboard's API; a traffic provider user's (lgps_…) opens /api/portal/ only.",
    }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the session ends if left idle; each use extends it',
    }),
    kind: Type.Union([Type.Literal('operator'), Type.Literal('provider')], {
      description: "Who signed in: an operator (dashboard) or a traffic provider's user (portal)",
    }),
    operator: Type.Optional(Operator),
    portal: Type.Optional(
      Type.Object({
        user: Type.Object({
          id: Type.String(),
          email: Type.String(),
          name: Type.String(),
          timezone: Type.String(),
          two_factor: Type.Boolean(),
        }),
        traffic_provider: Type.Object({ id: Type.String(), name: Type.String() }),
      }),
    ),
  },
  { title: 'SessionCreated' },
);

const ApiKeyInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

const NamedRef = Type.Object({
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()], { description: 'null once the record is deleted' }),
});

const WhoAmI = Type.Object(
  {
    operator: Operator,
    via: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
    admin: Type.Boolean({
      description:
        "The operator's role is the built-in admin role (e.g. may list and revoke every operator's API keys)",
    }),
    permissions: Type.Array(Type.String(), { description: 'Effective: key scopes ∩ role permissions, now' }),
    api_key: Type.Union([ApiKeyInfo, Type.Null()]),
    scope: Type.Object(
      {
        traffic_providers: Type.Union([Type.Array(NamedRef), Type.Null()], {
          description: "Only these traffic providers' leads, reports and figures; null: every provider",
        }),
        partners: Type.Union([Type.Array(NamedRef), Type.Null()], {
          description: "Only these partners' leads, reports and figures; null: every partner",
        }),
      },
      { description: "Whose data the operator's role reads (a key reads what its operator's role does)" },
    ),
  },
  { title: 'WhoAmI' },
);

export default async function authRoutes(app: App) {
  const idle = app.config.sessionIdleMinutes;

  app.post(
    '/api/auth/login',
    {
      config: { public: true },
      schema: {
        operationId: 'login',
        tags: ['Auth'],
        summary: 'Log in to the dashboard (operators) or the portal (traffic provider users)',
        description:
          'Answers 401 for a wrong email or password alike, and 429 `rate_limited` (with Retry-After) after repeated failures: ' +
          '5 per account and 20 per address within 15 minutes. Every try is counted before it is judged, so concurrent guesses ' +
          'share the budget too; passwords, two-factor codes and recovery codes all spend the same per-account budget. ' +
          'With two-factor sign-in on, a right password without a code answers 401 `totp_required`: send it again with `totp_code` ' +
          '(or `recovery_code`). A wrong or reused code is a failed login.',
        body: Type.Object(
          {
            email: Email,
            password: Type.String({ minLength: 1, maxLength: 256 }),
            totp_code: Type.Optional(
              Type.String({
                minLength: 6,
                maxLength: 6,
                pattern: '^[0-9]{6}$',
                description: 'The 6-digit code from your authenticator app',
              }),
            ),
            recovery_code: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 32,
                description: 'One of your one-time recovery codes, instead of totp_code',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: SessionCreated, ...problems(401, 429) },
      },
    },
    async (req) => login(app.db, actorOf(req), req.body, req.headers['user-agent'] ?? '', idle),
  );

  app.post(
    '/api/auth/logout',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'logout',
        tags: ['Auth'],
        summary: 'End this session',
        description: 'The session token stops working at once. (API keys are revoked in Settings → API instead.)',
        response: { 204: Type.Null({ description: 'Logged out' }) },
      },
    },
    async (req, reply) => {
      await logout(app.db, actorOf(req));
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/auth/whoami',
    {
      config: { authenticated: true },
      schema: {
        operationId: 'whoami',
        tags: ['Auth'],
        summary: 'The caller: operator, credential type and effective permissions',
        response: { 200: WhoAmI },
      },
    },
    async (req) => whoami(app.db, actorOf(req)),
  );

  app.get(
    '/api/setup',
    {
      config: { public: true },
      schema: {
        operationId: 'getSetupStatus',
        tags: ['Auth'],
        summary: 'Whether first-run setup is still needed (no operator exists yet)',
        response: { 200: Type.Object({ needed: Type.Boolean() }, { title: 'SetupStatus' }) },
      },
    },
    async () => ({ needed: await setupNeeded(app.db) }),
  );

  app.post(
    '/api/setup',
    {
      config: { public: true },
      schema: {
        operationId: 'completeSetup',
        tags: ['Auth'],
        summary: 'First-run setup: create the owner (role admin) and log in',
        description: 'Works once, while no operator exists; afterwards 409.',
        body: Type.Object({ email: Email, name: PersonName, password: Password }, { additionalProperties: false }),
        response: { 201: SessionCreated, ...problems(409) },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await completeSetup(app.db, actorOf(req), req.body, req.headers['user-agent'] ?? '', idle)),
  );
}
