// The licence panel (contract §1.9: session-only; admins only). Nothing in the product is
// limited by the licence: without one the community plan is in force.
import { Type } from 'typebox';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { MAX_KEY_LENGTH } from './format.js';
import { installLicence, licenceView, removeLicence } from './service.js';

const Licence = Type.Object(
  {
    installation_id: Type.String({
      format: 'uuid',
      description: 'Made once per installation; a licence may be bound to it',
    }),
    status: Type.Union(
      [
        Type.Literal('community'),
        Type.Literal('valid'),
        Type.Literal('expiring'),
        Type.Literal('expired'),
        Type.Literal('invalid'),
      ],
      {
        description:
          'community: no licence installed (the default; nothing is limited). expiring: within 30 days of expiry. invalid: the stored key no longer verifies.',
      },
    ),
    licence: Type.Union([
      Type.Object({
        licence_id: Type.String(),
        holder: Type.String(),
        plan: Type.String(),
        limits: Type.Record(Type.String(), Type.Integer(), {
          description: 'As granted, e.g. {"operators": 10}; informational',
        }),
        issued_at: Type.String({ format: 'date-time' }),
        expires_at: Type.String({ format: 'date-time' }),
        installation_id: Type.Union([Type.String(), Type.Null()], {
          description: 'The installation the licence is bound to, or null',
        }),
        days_left: Type.Integer({ minimum: 0 }),
        installed_at: Type.String({ format: 'date-time' }),
      }),
      Type.Null(),
    ]),
    warning: Type.Union([Type.String(), Type.Null()], {
      description: 'Shown in the panel when expiring, expired or invalid',
    }),
  },
  { title: 'Licence' },
);

const REFUSALS = {
  description:
    'validation_failed: `key` is not a licence key; licence_invalid: the signature does not verify; licence_expired; licence_wrong_installation: bound to another installation. The licence in force stays.',
  content: { 'application/problem+json': { schema: { $ref: 'Problem#' } } },
};

export default async function licenceRoutes(app: App) {
  app.get(
    '/api/licence',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'getLicence',
        tags: ['Licence'],
        summary: 'The installation id and the licence in force',
        response: { 200: Licence },
      },
    },
    async () => licenceView(app.db, app.config.licencePublicKey),
  );

  app.put(
    '/api/licence',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'installLicence',
        tags: ['Licence'],
        summary: 'Install a licence key',
        description: `Verified offline against the vendor public key built into the release. Whitespace in the key is ignored. A refused key leaves the licence in force unchanged.`,
        body: Type.Object(
          { key: Type.String({ minLength: 1, maxLength: MAX_KEY_LENGTH, description: 'LG1.<payload>.<signature>' }) },
          { additionalProperties: false },
        ),
        response: { 200: Licence, 400: REFUSALS },
      },
    },
    async (req) => installLicence(app.db, actorOf(req), req.body.key, app.config.licencePublicKey),
  );

  app.delete(
    '/api/licence',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'removeLicence',
        tags: ['Licence'],
        summary: 'Remove the licence: back to the community plan',
        description: 'The licence in force is removed; the installation runs on the community plan.',
        response: { 200: Licence },
      },
    },
    async (req) => removeLicence(app.db, actorOf(req), app.config.licencePublicKey),
  );
}
