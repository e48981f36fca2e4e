import { Type } from 'typebox';
import { Password } from '../operators/schemas.js';

export const PortalScopeSchema = Type.Union([Type.Literal('portal:view'), Type.Literal('portal:edit')]);

export const CreatePortalKey = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'What the key is for' }),
    scopes: Type.Array(PortalScopeSchema, {
      minItems: 1,
      maxItems: 2,
      description: 'portal:view reads; portal:edit also changes postbacks and rotates intake tokens',
    }),
    expires_at: Type.Optional(
      Type.Union([Type.String({ format: 'date-time', maxLength: 40 }), Type.Null()], {
        description: 'Optional expiry, in the future',
      }),
    ),
  },
  { additionalProperties: false },
);

export const AcceptInvitation = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200, description: 'The invitation token (lgi_…) from the link' }),
    password: Password,
  },
  { additionalProperties: false },
);

export const PortalMe = Type.Object(
  {
    user: Type.Object({
      id: Type.String(),
      email: Type.String(),
      name: Type.String(),
      timezone: Type.String({ description: 'The IANA zone the portal shows dates in' }),
    }),
    traffic_provider: Type.Object({ id: Type.String(), name: Type.String() }),
    via: Type.Union([Type.Literal('session'), Type.Literal('api_key')]),
    scopes: Type.Array(PortalScopeSchema),
    view_as: Type.Boolean({ description: 'An operator viewing the portal as the provider (read only)' }),
    shows: Type.Object({
      sale_status: Type.Boolean(),
      payout: Type.Boolean(),
      contacts: Type.Boolean({ description: 'The contacts the provider sent, masked' }),
      ftd_hold_hours: Type.Integer({
        description: 'FTDs are confirmed (shown, posted back) this many hours after they are recorded',
      }),
    }),
  },
  { title: 'PortalMe' },
);
