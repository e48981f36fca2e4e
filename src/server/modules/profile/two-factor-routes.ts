import type { FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { Type } from 'typebox';
import { clientIp } from '../../auth/guard.js';
import { otpauthUri } from '../../auth/totp.js';
import { conflict, invalid } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { beginAttempt, forgetAttempt } from '../auth/service.js';
import {
  confirmEnrolment,
  disableTwoFactor,
  replaceRecoveryCodes,
  spendCode,
  startEnrolment,
  twoFactorStatus,
} from './two-factor.js';

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
  /**
   * Wrong codes on these routes count toward the account's login rate limit, so a stolen
   * session cannot guess its way to turning 2FA off.
   */
  async function spendOrRefuse(req: FastifyRequest, code: string) {
    const p = principalOf(req);
    if (!(await twoFactorStatus(app.db, p.operator.id)).enabled) conflict('Two-factor sign-in is not on.');
    // Counted before it is judged, like a login (see beginAttempt), so concurrent guesses cannot
    // all slip under the budget.
    const attempt = await beginAttempt(app.db, clientIp(req), p.operator.email);
    const kind = await spendCode(app.db, p.operator.id, code);
    if (!kind) {
      await audit(app.db, req, {
        action: 'auth.totp_failed',
        target_type: 'operator',
        target_id: p.operator.id,
        details: { where: req.routeOptions.url },
      });
      invalid([{ field: 'code', message: 'is wrong or already used' }]);
    }
    await forgetAttempt(app.db, attempt);
    return kind!;
  }

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
    async (req) => {
      const p = principalOf(req);
      const secret = await startEnrolment(app.db, p.operator.id);
      const uri = otpauthUri(secret, p.operator.email);
      const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
      return { secret, otpauth_uri: uri, qr: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}` };
    },
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
    async (req) => {
      const p = principalOf(req);
      const codes = await app.db.transaction().execute(async (tx) => {
        const codes = await confirmEnrolment(tx, p.operator.id, req.body.code);
        await audit(tx, req, { action: 'profile.2fa_enabled', target_type: 'operator', target_id: p.operator.id });
        return codes;
      });
      return { recovery_codes: codes };
    },
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
      const p = principalOf(req);
      const kind = await spendOrRefuse(req, req.body.code);
      await app.db.transaction().execute(async (tx) => {
        await disableTwoFactor(tx, p.operator.id);
        await audit(tx, req, {
          action: 'profile.2fa_disabled',
          target_type: 'operator',
          target_id: p.operator.id,
          details: { with: kind },
        });
      });
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
    async (req) => {
      const p = principalOf(req);
      await spendOrRefuse(req, req.body.code);
      const codes = await app.db.transaction().execute(async (tx) => {
        const codes = await replaceRecoveryCodes(tx, p.operator.id);
        await audit(tx, req, {
          action: 'profile.recovery_codes_replaced',
          target_type: 'operator',
          target_id: p.operator.id,
        });
        return codes;
      });
      return { recovery_codes: codes };
    },
  );
}
