import { Type } from 'typebox';
import { Email, PersonName } from '../operators/schemas.js';

export const ProviderUserStatus = Type.Union([
  Type.Literal('invited'),
  Type.Literal('active'),
  Type.Literal('disabled'),
]);

export const ProviderUser = Type.Object(
  {
    id: Type.String(),
    traffic_provider_id: Type.String(),
    email: Type.String(),
    name: Type.String(),
    status: ProviderUserStatus,
    two_factor: Type.Boolean({ description: 'Whether two-factor sign-in is on' }),
    invitation_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'While invited: when the invitation link stops working',
    }),
    created_at: Type.String({ format: 'date-time' }),
    last_login_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { title: 'ProviderUser' },
);

export const InvitationMail = Type.Object(
  {
    status: Type.Union([Type.Literal('sent'), Type.Literal('failed'), Type.Literal('not_configured')], {
      description:
        'sent: the mail server took the mail with the link; failed: it was not mailed (see error; the link still works); ' +
        'not_configured: no mail server is set up (SMTP_URL), so hand the link over yourself',
    }),
    to: Type.String({ description: 'The address it was (or would have been) mailed to' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it was not mailed (failed), else null' }),
  },
  { title: 'InvitationMail' },
);

export const ProviderUserInvited = Type.Object(
  {
    ...ProviderUser.properties,
    invitation_token: Type.String({
      description: 'The one-time invitation token (lgi_…). Shown only in this answer; valid 7 days.',
    }),
    invitation_url: Type.String({
      description: 'The link to hand to the provider user (the token sits after #, so it reaches no server log)',
    }),
    mail: InvitationMail,
  },
  { title: 'ProviderUserInvited' },
);

export const InviteProviderUser = Type.Object(
  { email: Email, name: Type.Optional(PersonName) },
  { additionalProperties: false },
);

export const UpdateProviderUser = Type.Object(
  {
    status: Type.Union([Type.Literal('active'), Type.Literal('disabled')], {
      description: 'disabled ends its sessions and revokes its keys at once; active lets it sign in again',
    }),
  },
  { additionalProperties: false },
);

export const PortalKeyStatus = Type.Union([Type.Literal('active'), Type.Literal('expired'), Type.Literal('revoked')]);

export const PortalApiKey = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scopes: Type.Array(Type.Union([Type.Literal('portal:view'), Type.Literal('portal:edit')])),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    status: PortalKeyStatus,
    prefix: Type.String({ description: 'The non-secret start of the key (lgpk_ + id)' }),
  },
  { title: 'PortalApiKey' },
);

export const ViewAsSession = Type.Object(
  {
    token: Type.String({
      description: 'A read-only portal session (lgps_…) showing the portal as the provider sees it',
    }),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { title: 'ViewAsSession' },
);
