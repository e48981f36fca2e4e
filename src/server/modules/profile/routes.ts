import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { Email, Operator, Password, PersonName, Timezone } from '../operators/schemas.js';
import { changePassword, getProfile, updateProfile } from './service.js';
import sessionRoutes from './sessions-routes.js';
import twoFactorRoutes from './two-factor-routes.js';

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
  app.get(
    '/api/profile',
    {
      config: { sessionOnly: true },
      schema: { operationId: 'getProfile', tags: ['Profile'], summary: 'Your own profile', response: { 200: Profile } },
    },
    async (req) => getProfile(app.db, actorOf(req)),
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
    async (req) => updateProfile(app.db, actorOf(req), req.body, req.routeOptions.url),
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
      await changePassword(
        app.db,
        actorOf(req),
        req.body.current_password,
        req.body.new_password,
        req.routeOptions.url,
      );
      return reply.status(204).send(null);
    },
  );

  await twoFactorRoutes(app);
  await sessionRoutes(app);
}
