import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { confirmTwoFactor, enrolTwoFactor, regenerateRecoveryCodes, turnOffTwoFactor } from './service.js';

const CodeBody = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'A 6-digit code from your authenticator app, or one of your recovery codes',
    }),
  },
  { additionalProperties: false },
);

const Enrolment = Type.Object(
  {
    secret: Type.String({ description: 'The base32 seed, for typing into an app by hand' }),
    otpauth_uri: Type.String({ description: 'otpauth://totp/… as read from the QR code' }),
    qr: Type.String({ description: 'The otpauth URI as a QR code: an SVG image in a data: URL' }),
  },
  { title: 'TwoFactorEnrolment' },
);

const RecoveryCodes = Type.Object(
  {
    recovery_codes: Type.Array(Type.String(), {
      description: 'Ten one-time codes, shown this once; only their hashes are kept',
    }),
  },
  { title: 'RecoveryCodes' },
);

export default async function twoFactorRoutes(app: App) {
  app.post(
    '/api/profile/2fa/enrol',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'enrolTwoFactor',
        tags: ['Profile'],
        summary: 'Start two-factor enrolment: a new secret and its QR code',
        description:
          'Nothing changes until the secret is confirmed with a code. Calling it again replaces the pending secret. 409 while 2FA is on.',
        response: { 200: Enrolment, ...problems(409) },
      },
    },
    async (req) => enrolTwoFactor(app.db, actorOf(req)),
  );

  app.post(
    '/api/profile/2fa/confirm',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'confirmTwoFactor',
        tags: ['Profile'],
        summary: 'Turn two-factor sign-in on with a code from the new secret',
        description:
          'Answers the ten recovery codes, shown this once. 400 naming `code` for a wrong code; 409 without a pending enrolment.',
        body: CodeBody,
        response: { 200: RecoveryCodes, ...problems(409) },
      },
    },
    async (req) => confirmTwoFactor(app.db, actorOf(req), req.body.code),
  );

  app.post(
    '/api/profile/2fa/disable',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'disableTwoFactor',
        tags: ['Profile'],
        summary: 'Turn two-factor sign-in off',
        description: 'Needs a current code or a recovery code. Wrong codes count toward the login rate limit (429).',
        body: CodeBody,
        response: {
          204: Type.Null({ description: 'Off; the secret and recovery codes are deleted' }),
          ...problems(409, 429),
        },
      },
    },
    async (req, reply) => {
      await turnOffTwoFactor(app.db, actorOf(req), req.body.code, req.routeOptions.url);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/profile/2fa/recovery-codes',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'regenerateRecoveryCodes',
        tags: ['Profile'],
        summary: 'Replace your recovery codes with ten new ones',
        description:
          'Needs a current code or a recovery code; the old recovery codes stop working. Wrong codes count toward the login rate limit (429).',
        body: CodeBody,
        response: { 200: RecoveryCodes, ...problems(409, 429) },
      },
    },
    async (req) => regenerateRecoveryCodes(app.db, actorOf(req), req.body.code, req.routeOptions.url),
  );
}
