// The operators' side of the traffic-provider portal (issue 27): inviting a provider's users,
// disabling them (their sessions end and their keys stop at once, on every instance: the auth
// generation moves by trigger), revoking their keys, and "View as provider".
import { hash } from 'node:crypto';
import type { Static } from 'typebox';
import { issueToken } from '../../auth/credentials.js';
import type { DB } from '../../db/database.js';
import { newId, nowIso } from '../../db/ids.js';
import { conflict, HttpProblem, notFound } from '../../http/errors.js';
import { principalOf } from '../../types.js';
import { providerInScope } from '../../db/record-scope.js';
import { audit, scopeOf, type Actor } from '../audit/service.js';
import { publicLink, readPublicBaseUrl } from '../hosting/public-url.js';
import { emailTaken } from '../operators/queries.js';
import { findTrafficProvider } from '../traffic-providers/queries.js';
import { mailInvitation, type MailSetup } from './invitation-mail.js';
import { toPortalKey } from './keys.js';
import {
  deleteUserSessions,
  findPortalKey,
  findProviderUser,
  hasPassword,
  insertPortalSession,
  insertProviderUser,
  patchProviderUser,
  portalKeyPage,
  providerUserPage,
  revokePortalKey,
  revokeUserKeys,
} from './queries.js';
import type { InviteProviderUser, UpdateProviderUser } from './schemas.js';

export const INVITATION_DAYS = 7;

/** An invitation token is looked up by this hash (190 random bits: no slow hash needed). */
export const invitationHash = (token: string) => hash('sha256', token, 'hex');

type UserRow = NonNullable<Awaited<ReturnType<typeof findProviderUser>>>;

export const toProviderUser = (u: UserRow) => ({
  id: u.id,
  traffic_provider_id: u.traffic_provider_id,
  email: u.email,
  name: u.name,
  status: u.status,
  two_factor: u.totp_secret !== null,
  invitation_expires_at: u.status === 'invited' ? u.invitation_expires_at : null,
  created_at: u.created_at,
  last_login_at: u.last_login_at,
});

/** The provider, or 404 when there is none or the operator's role is limited to others. */
async function liveProvider(db: DB, actor: Actor, providerId: string) {
  const p =
    (providerInScope(scopeOf(actor), providerId) && (await findTrafficProvider(db, providerId))) ||
    notFound('traffic provider');
  return p!;
}

async function userOf(db: DB, actor: Actor, providerId: string, userId: string) {
  await liveProvider(db, actor, providerId);
  return (await findProviderUser(db, providerId, userId)) ?? notFound('provider user');
}

async function newInvitation(db: DB) {
  const { token } = issueToken('lgi_');
  const expires = new Date(Date.now() + INVITATION_DAYS * 86_400_000).toISOString();
  const url = publicLink(await readPublicBaseUrl(db), `/portal/invitation#token=${token}`);
  return { token, hash: invitationHash(token), expires, url };
}

const invitationOf = (providerName: string, u: UserRow, inv: { url: string; expires: string }) => ({
  providerId: u.traffic_provider_id,
  providerName,
  userId: u.id,
  email: u.email,
  name: u.name,
  url: inv.url,
  expires: inv.expires,
});

/**
 * A provider user invited: the one-time link is in this answer only, and mailed to the user when
 * a mail server is set up (after the commit: a mail that fails loses no invitation).
 */
export async function inviteProviderUser(
  db: DB,
  actor: Actor,
  providerId: string,
  b: Static<typeof InviteProviderUser>,
  mail: MailSetup,
) {
  const provider = await liveProvider(db, actor, providerId);
  if (provider.archived_at) conflict('The traffic provider is archived; restore it before inviting its users.');
  const email = b.email.trim().toLowerCase();
  const inv = await newInvitation(db);
  const now = nowIso();
  const id = newId();
  await db.transaction().execute(async (tx) => {
    // One sign-in page for operators and provider users: an email signs in as one of them only.
    if (await emailTaken(tx, email)) conflict(`Someone already signs in with ${email}.`);
    await insertProviderUser(tx, {
      id,
      traffic_provider_id: providerId,
      email,
      name: b.name?.trim() || email,
      password_hash: null,
      status: 'invited',
      invitation_hash: inv.hash,
      invitation_expires_at: inv.expires,
      totp_secret: null,
      totp_pending_secret: null,
      totp_last_step: null,
      created_at: now,
      updated_at: now,
      last_login_at: null,
    });
    await audit(tx, actor, {
      action: 'provider_user.invited',
      target_type: 'traffic_provider',
      target_id: providerId,
      details: { provider_user_id: id, email },
    });
  });
  const user = (await findProviderUser(db, providerId, id))!;
  const mailed = await mailInvitation(db, actor, mail, invitationOf(provider.name, user, inv));
  return { ...toProviderUser(user), invitation_token: inv.token, invitation_url: inv.url, mail: mailed };
}

export async function listProviderUsers(
  db: DB,
  actor: Actor,
  providerId: string,
  f: { limit: number; cursor?: string },
) {
  await liveProvider(db, actor, providerId);
  const page = await providerUserPage(db, providerId, f);
  return { ...page, data: page.data.map(toProviderUser) };
}

/** Disable (its sessions end and its keys are revoked at once) or enable again. */
export async function updateProviderUser(
  db: DB,
  actor: Actor,
  providerId: string,
  userId: string,
  b: Static<typeof UpdateProviderUser>,
) {
  const user = await userOf(db, actor, providerId, userId);
  const now = nowIso();
  await db.transaction().execute(async (tx) => {
    if (b.status === 'disabled' && user.status !== 'disabled') {
      await patchProviderUser(tx, userId, { status: 'disabled', updated_at: now, invitation_hash: null });
      await deleteUserSessions(tx, userId);
      await revokeUserKeys(tx, userId, now);
    } else if (b.status === 'active' && user.status === 'disabled') {
      // Back to where it was: signed up before, or still to accept (renew its invitation then).
      await patchProviderUser(tx, userId, {
        status: (await hasPassword(tx, userId)) ? 'active' : 'invited',
        updated_at: now,
      });
    }
    await audit(tx, actor, {
      action: 'provider_user.updated',
      target_type: 'traffic_provider',
      target_id: providerId,
      details: { provider_user_id: userId, email: user.email, status: b.status },
    });
  });
  return toProviderUser((await findProviderUser(db, providerId, userId))!);
}

/** A new one-time invitation link (the old one stops working), while the user has not accepted; mailed as above. */
export async function renewInvitation(db: DB, actor: Actor, providerId: string, userId: string, mail: MailSetup) {
  const provider = await liveProvider(db, actor, providerId);
  const user = await userOf(db, actor, providerId, userId);
  if (user.status !== 'invited') conflict('Only an invited user who has not set a password gets a new invitation.');
  const inv = await newInvitation(db);
  await db.transaction().execute(async (tx) => {
    await patchProviderUser(tx, userId, {
      invitation_hash: inv.hash,
      invitation_expires_at: inv.expires,
      updated_at: nowIso(),
    });
    await audit(tx, actor, {
      action: 'provider_user.invitation_renewed',
      target_type: 'traffic_provider',
      target_id: providerId,
      details: { provider_user_id: userId, email: user.email },
    });
  });
  const after = (await findProviderUser(db, providerId, userId))!;
  const mailed = await mailInvitation(db, actor, mail, invitationOf(provider.name, after, inv));
  return { ...toProviderUser(after), invitation_token: inv.token, invitation_url: inv.url, mail: mailed };
}

export async function listUserKeys(
  db: DB,
  actor: Actor,
  providerId: string,
  userId: string,
  f: { limit: number; cursor?: string },
) {
  await userOf(db, actor, providerId, userId);
  const page = await portalKeyPage(db, userId, f);
  return { ...page, data: page.data.map(toPortalKey) };
}

export async function revokeUserKey(db: DB, actor: Actor, providerId: string, userId: string, keyId: string) {
  await userOf(db, actor, providerId, userId);
  const key = (await findPortalKey(db, userId, keyId)) ?? notFound('API key');
  await db.transaction().execute(async (tx) => {
    await revokePortalKey(tx, keyId, nowIso());
    await audit(tx, actor, {
      action: 'provider_user.api_key_revoked',
      target_type: 'traffic_provider',
      target_id: providerId,
      details: { provider_user_id: userId, api_key_id: keyId, name: key!.name },
    });
  });
  return toPortalKey((await findPortalKey(db, userId, keyId))!);
}

/**
 * "View as provider": a read-only portal session showing the portal exactly as the provider's
 * users see it, for an operator who may read that provider's leads. Audited.
 */
export async function viewAsProvider(db: DB, actor: Actor, providerId: string, userAgent: string, idleMinutes: number) {
  const p = principalOf(actor);
  if (!p.permissions.has('leads:view'))
    throw new HttpProblem(403, 'forbidden', 'Viewing as a provider shows its leads: your role needs leads:view.');
  // The portal shows every lead of the provider, whichever partner took it: not for a role limited to some partners.
  if (p.scope.partnerIds !== null)
    throw new HttpProblem(
      403,
      'forbidden',
      "Your role is limited to some partners; the portal shows every partner's leads.",
    );
  await liveProvider(db, actor, providerId);
  const { id, token, secretHash } = issueToken('lgps_');
  const now = nowIso();
  await db.transaction().execute(async (tx) => {
    await insertPortalSession(tx, {
      id,
      secret_hash: secretHash,
      traffic_provider_id: providerId,
      provider_user_id: null,
      viewer_operator_id: p.operator.id,
      created_at: now,
      last_seen_at: now,
      ip: actor.ip ?? '',
      user_agent: userAgent.slice(0, 300),
    });
    await audit(tx, actor, {
      action: 'traffic_provider.viewed_as',
      target_type: 'traffic_provider',
      target_id: providerId,
    });
  });
  return { token, expires_at: new Date(Date.now() + idleMinutes * 60_000).toISOString() };
}
