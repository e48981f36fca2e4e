import { Type } from 'typebox';
import { clientIp } from '../../auth/guard.js';
import { verifyPassword } from '../../auth/passwords.js';
import { HttpProblem, conflict, invalid } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { findOperator } from '../operators/queries.js';
import { Email, Operator, Password, PersonName } from '../operators/schemas.js';
import { createOwner, ownerExists } from '../operators/service.js';
import { spendCode } from '../profile/two-factor.js';
import { beginAttempt, clearFailures, createSession, forgetAttempt } from './service.js';

const SessionCreated = Type.Object(
  {
    token: Type.String({ description: 'Session token (lgs_…); send as Authorization: Bearer. Shown once.' }),
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the session ends if left idle; each use extends it',
    }),
    operator: Operator,
  },
  { title: 'SessionCreated' },
);

const ApiKeyInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
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
        summary: 'Log in to the dashboard',
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
    async (req) => {
      const { totp_code, recovery_code } = req.body;
      if (totp_code !== undefined && recovery_code !== undefined)
        invalid([{ field: 'recovery_code', message: 'goes instead of totp_code, not with it' }]);
      const email = req.body.email.trim().toLowerCase();
      const ip = clientIp(req);
      // Counted before it is judged (see beginAttempt): a failure is this row left in place.
      const attempt = await beginAttempt(app.db, ip, email);
      const row = await app.db
        .selectFrom('operators')
        .select(['id', 'password_hash', 'status', 'totp_secret'])
        .where('email', '=', email)
        .executeTakeFirst();
      const ok = await verifyPassword(row?.password_hash ?? null, req.body.password);
      if (!row || !ok || row.status !== 'active') {
        await audit(app.db, req, {
          action: 'auth.login_failed',
          actor: { id: row?.id ?? null, email },
          details: { reason: !row ? 'unknown_email' : !ok ? 'wrong_password' : 'operator_disabled' },
        });
        throw new HttpProblem(401, 'unauthorized', 'Wrong email or password.');
      }
      // Before clearFailures: a right password alone must not reset the count of wrong codes.
      if (row.totp_secret !== null) {
        if (totp_code === undefined && recovery_code === undefined) {
          await forgetAttempt(app.db, attempt); // a right password is no failure, nor a reset
          throw new HttpProblem(
            401,
            'totp_required',
            'Enter the 6-digit code from your authenticator app, or a recovery code.',
          );
        }
        const kind = totp_code !== undefined ? 'totp' : 'recovery';
        if (!(await spendCode(app.db, row.id, totp_code ?? recovery_code!, kind))) {
          await audit(app.db, req, { action: 'auth.totp_failed', actor: { id: row.id, email }, details: { kind } });
          throw new HttpProblem(401, 'unauthorized', 'The two-factor code is wrong or already used.');
        }
      }
      await clearFailures(app.db, email);
      const session = await createSession(app.db, row.id, ip, req.headers['user-agent'] ?? '', idle);
      await audit(app.db, req, { action: 'auth.login', actor: { id: row.id, email } });
      return { ...session, operator: (await findOperator(app.db, row.id))! };
    },
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
      const p = principalOf(req);
      await app.db.deleteFrom('sessions').where('id', '=', p.sessionId!).execute();
      await audit(app.db, req, { action: 'auth.logout' });
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
    async (req) => {
      const p = principalOf(req);
      const key = p.apiKeyId
        ? await app.db
            .selectFrom('api_keys')
            .select(['id', 'name', 'scopes', 'expires_at'])
            .where('id', '=', p.apiKeyId)
            .executeTakeFirst()
        : undefined;
      return {
        operator: (await findOperator(app.db, p.operator.id))!,
        via: p.via,
        admin: p.isAdmin,
        permissions: [...p.permissions].sort(),
        api_key: key ? { ...key, scopes: JSON.parse(key.scopes) as string[] } : null,
      };
    },
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
    async () => ({ needed: !(await ownerExists(app.db)) }),
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
    async (req, reply) => {
      const id = await createOwner(app.db, req.body);
      if (!id) conflict('Setup is already done; log in instead.');
      await audit(app.db, req, {
        action: 'operator.created',
        actor: { id, email: req.body.email.toLowerCase() },
        target_type: 'operator',
        target_id: id!,
        details: { via: 'setup' },
      });
      const session = await createSession(app.db, id!, clientIp(req), req.headers['user-agent'] ?? '', idle);
      return reply.status(201).send({ ...session, operator: (await findOperator(app.db, id!))! });
    },
  );
}
