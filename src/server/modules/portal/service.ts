// A traffic provider's user and its own things (issue 27): accepting an invitation, who it is,
// signing out, and its own API keys (portal scopes only). Every use case acts for the provider
// principal the guard resolved; another user's key by id is "not found".
import type { Static } from 'typebox';
import { issueToken, parseToken } from '../../auth/credentials.js';
import { hashPassword } from '../../auth/passwords.js';
import type { DB } from '../../db/database.js';
import { nowIso } from '../../db/ids.js';
import { HttpProblem, invalid, notFound } from '../../http/errors.js';
import { audit, providerOf, type Actor } from '../audit/service.js';
import { addressOf, beginAttempt, forgetAttempt } from '../auth/service.js';
import { toPortalKey } from '../provider-users/keys.js';
import {
  deletePortalSession,
  findPortalKey,
  insertPortalKey,
  patchProviderUser,
  portalKeyPage,
  revokePortalKey,
  userByInvitation,
} from '../provider-users/queries.js';
import { invitationHash } from '../provider-users/service.js';
import { readPortalSettings } from '../traffic-providers/portal-settings.js';
import { canonicalTimeZone } from '../../time.js';
import { providerName } from './queries.js';
import type { CreatePortalKey } from './schemas.js';

/** The caller: its user (or the operator viewing as the provider), provider, scopes and what the portal shows. */
export async function me(db: DB, actor: Actor) {
  const p = providerOf(actor);
  const settings = (await readPortalSettings(db, p.trafficProviderId))!;
  const provider = await providerName(db, p.trafficProviderId);
  return {
    user: { id: p.user.id, email: p.user.email, name: p.user.name, timezone: p.user.timezone },
    traffic_provider: provider,
    via: p.via,
    scopes: [...p.scopes].sort(),
    view_as: p.viewAs !== null,
    shows: {
      sale_status: settings.show_sale_status,
      payout: settings.show_payout,
      contacts: settings.show_contacts,
      ftd_hold_hours: settings.ftd_hold_hours,
    },
  };
}

/** The user's own name and time zone (the zone its dates and statistics are in). */
export async function updatePortalMe(db: DB, actor: Actor, b: { name?: string; timezone?: string }) {
  const p = providerOf(actor);
  const patch: { name?: string; timezone?: string } = {};
  if (b.name !== undefined) patch.name = b.name.trim();
  if (b.timezone !== undefined) {
    const tz = canonicalTimeZone(b.timezone.trim());
    if (tz === null)
      invalid([{ field: 'timezone', message: `"${b.timezone}" is not an IANA time zone (e.g. Europe/Berlin)` }]);
    patch.timezone = tz!;
  }
  await db.transaction().execute(async (tx) => {
    await patchProviderUser(tx, p.user.id, { ...patch, updated_at: nowIso() });
    await audit(tx, actor, {
      action: 'portal.profile_updated',
      target_type: 'traffic_provider',
      target_id: p.trafficProviderId,
      details: patch,
    });
  });
  return me(db, { ...actor, provider: { ...p, user: { ...p.user, ...patch } } });
}

/**
 * Sets the password of an invited provider user: the invitation works once, for 7 days. Each try
 * is counted against the caller's address like a login (20 per 15 minutes), before it is judged.
 */
export async function acceptInvitation(db: DB, actor: Actor, b: { token: string; password: string }) {
  const ip = addressOf(actor);
  const attempt = await beginAttempt(db, ip, `invitation@${ip}`);
  const parsed = parseToken(b.token.trim());
  const user = parsed?.kind === 'lgi_' ? await userByInvitation(db, invitationHash(b.token.trim())) : undefined;
  if (!user || user.status !== 'invited')
    invalid([{ field: 'token', message: 'is not a valid invitation (it may have been used or replaced already)' }]);
  if (Date.parse(user!.invitation_expires_at ?? '') <= Date.now())
    invalid([{ field: 'token', message: 'has expired: ask your account manager for a new invitation' }]);
  await forgetAttempt(db, attempt);
  const hash = await hashPassword(b.password);
  await db.transaction().execute(async (tx) => {
    await patchProviderUser(tx, user!.id, {
      password_hash: hash,
      status: 'active',
      invitation_hash: null,
      invitation_expires_at: null,
      updated_at: nowIso(),
    });
    await audit(tx, actor, {
      action: 'provider_user.accepted',
      actor: { id: user!.id, email: user!.email },
      actorKind: 'provider_user',
      target_type: 'traffic_provider',
      target_id: user!.traffic_provider_id,
    });
  });
  return { email: user!.email, status: 'active' as const };
}

export async function portalLogout(db: DB, actor: Actor) {
  const p = providerOf(actor);
  if (p.via !== 'session')
    throw new HttpProblem(403, 'session_required', 'Sign out ends a session; an API key is revoked instead.');
  await deletePortalSession(db, p.sessionId!);
  await audit(db, actor, { action: 'portal.logout' });
}

/** The user's own keys (portal scopes only); the secret is in this answer only. Sessions only. */
export async function createPortalKey(db: DB, actor: Actor, b: Static<typeof CreatePortalKey>) {
  const p = providerOf(actor);
  if (p.via !== 'session')
    throw new HttpProblem(403, 'session_required', 'API keys are made from a signed-in session, not by another key.');
  if (b.expires_at && Date.parse(b.expires_at) <= Date.now())
    invalid([{ field: 'expires_at', message: 'must be in the future' }]);
  const { id, token, secretHash } = issueToken('lgpk_');
  const row = {
    id,
    provider_user_id: p.user.id,
    name: b.name.trim(),
    scopes: JSON.stringify([...new Set(b.scopes)].sort()),
    secret_hash: secretHash,
    created_at: nowIso(),
    expires_at: b.expires_at ? new Date(b.expires_at).toISOString() : null,
    revoked_at: null,
    last_used_at: null,
  };
  await db.transaction().execute(async (tx) => {
    await insertPortalKey(tx, row);
    await audit(tx, actor, {
      action: 'portal.api_key_created',
      target_type: 'traffic_provider',
      target_id: p.trafficProviderId,
      details: { api_key_id: id, name: row.name, scopes: b.scopes, expires_at: row.expires_at },
    });
  });
  return { ...toPortalKey(row), secret: token };
}

export async function listPortalKeys(db: DB, actor: Actor, f: { limit: number; cursor?: string }) {
  const p = providerOf(actor);
  const page = await portalKeyPage(db, p.user.id, f);
  return { ...page, data: page.data.map(toPortalKey) };
}

export async function revokeOwnPortalKey(db: DB, actor: Actor, id: string) {
  const p = providerOf(actor);
  const key = (await findPortalKey(db, p.user.id, id)) ?? notFound('API key');
  await db.transaction().execute(async (tx) => {
    await revokePortalKey(tx, id, nowIso());
    await audit(tx, actor, {
      action: 'portal.api_key_revoked',
      target_type: 'traffic_provider',
      target_id: p.trafficProviderId,
      details: { api_key_id: id, name: key!.name },
    });
  });
  return toPortalKey((await findPortalKey(db, p.user.id, id))!);
}
