import { Type } from 'typebox';
import { hashPassword } from '../../auth/passwords.js';
import { nowIso } from '../../db/ids.js';
import { conflict } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { confirmCurrentPassword } from '../auth/service.js';
import { findOperator } from '../operators/queries.js';
import { Email, Operator, Password, PersonName, Timezone } from '../operators/schemas.js';
import { assertTimezone } from '../operators/service.js';
import sessionRoutes from './sessions.js';
import twoFactorRoutes from './two-factor-routes.js';
import { twoFactorStatus } from './two-factor.js';

const Profile = Type.Object(
  {
    operator: Operator,
    permissions: Type.Array(Type.String(), { description: 'What your role holds' }),
    two_factor: Type.Object({
      enabled: Type.Boolean({ description: 'Sign-in asks for a TOTP code' }),
      recovery_codes_left: Type.Integer({ description: 'Unused recovery codes (0 while 2FA is off)' }),
    }),
  },
  { title: 'Profile' },
);

export default async function profileRoutes(app: App) {
  const profileOf = async (id: string, permissions: Iterable<string>) => ({
    operator: (await findOperator(app.db, id))!,
    permissions: [...permissions].sort(),
    two_factor: await twoFactorStatus(app.db, id),
  });

  app.get(
    '/api/profile',
    {
      config: { sessionOnly: true },
      schema: { operationId: 'getProfile', tags: ['Profile'], summary: 'Your own profile', response: { 200: Profile } },
    },
    async (req) => {
      const p = principalOf(req);
      return profileOf(p.operator.id, p.rolePermissions);
    },
  );

  app.patch(
    '/api/profile',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'updateProfile',
        tags: ['Profile'],
        summary: 'Change your name, time zone or email',
        description:
          'A new email (your sign-in) needs `current_password` (400 naming it when missing or wrong; wrong guesses count toward ' +
          'your login rate limit, 429); 409 when another operator has it.',
        body: Type.Object(
          {
            name: Type.Optional(PersonName),
            timezone: Type.Optional(Timezone),
            email: Type.Optional(Email),
            current_password: Type.Optional(
              Type.String({ minLength: 1, maxLength: 256, description: 'Needed to change the email' }),
            ),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Profile, ...problems(409, 429) },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const { name, timezone, current_password } = req.body;
      assertTimezone(timezone);
      const email = req.body.email?.trim().toLowerCase();
      const newEmail = email !== undefined && email !== p.operator.email ? email : undefined;
      if (newEmail !== undefined) {
        await confirmCurrentPassword(app.db, req, p, current_password, 'change your email');
        if (await app.db.selectFrom('operators').select('id').where('email', '=', newEmail).executeTakeFirst()) {
          conflict(`Another operator already signs in with ${newEmail}.`);
        }
      }
      await app.db.transaction().execute(async (tx) => {
        await tx
          .updateTable('operators')
          .set({
            ...(name !== undefined ? { name: name.trim() } : {}),
            ...(timezone !== undefined ? { timezone } : {}),
            ...(newEmail !== undefined ? { email: newEmail } : {}),
            updated_at: nowIso(),
          })
          .where('id', '=', p.operator.id)
          .execute();
        if (newEmail !== undefined) {
          await audit(tx, req, {
            action: 'profile.email_changed',
            target_type: 'operator',
            target_id: p.operator.id,
            details: { from: p.operator.email, to: newEmail },
          });
        }
      });
      return profileOf(p.operator.id, p.rolePermissions);
    },
  );

  app.post(
    '/api/profile/password',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'changePassword',
        tags: ['Profile'],
        summary: 'Change your password',
        description:
          'Needs your current password (400 naming `current_password` when wrong; wrong guesses count toward your login rate ' +
          'limit, 429). Every other session of yours ends; this one stays.',
        body: Type.Object(
          { current_password: Type.String({ minLength: 1, maxLength: 256 }), new_password: Password },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null({ description: 'Changed' }), ...problems(429) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      await confirmCurrentPassword(app.db, req, p, req.body.current_password, 'change your password');
      const password_hash = await hashPassword(req.body.new_password);
      await app.db.transaction().execute(async (tx) => {
        await tx
          .updateTable('operators')
          .set({ password_hash, updated_at: nowIso() })
          .where('id', '=', p.operator.id)
          .execute();
        await tx
          .deleteFrom('sessions')
          .where('operator_id', '=', p.operator.id)
          .where('id', '!=', p.sessionId!)
          .execute();
        await audit(tx, req, { action: 'profile.password_changed', target_type: 'operator', target_id: p.operator.id });
      });
      return reply.status(204).send(null);
    },
  );

  await twoFactorRoutes(app);
  await sessionRoutes(app);
}
