import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import { rolePermissions } from '../../auth/authenticate.js';
import { ALL_PERMISSIONS, ADMIN_ROLE_NAME } from '../../auth/permissions.js';
import { hashPassword } from '../../auth/passwords.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { conflict, HttpProblem, invalid, notFound } from '../../http/errors.js';
import { principalOf, type Principal } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import { disableTwoFactor } from '../profile/two-factor.js';
import { findRole } from '../roles/queries.js';
import { assertHeld } from '../roles/service.js';
import { assertScopeHeld, scopeOf } from '../roles/scope.js';
import {
  adminRoleId,
  anyOperator,
  claimMarker,
  deleteOperatorRow,
  emailTaken,
  endSessions,
  findAdminRoleId,
  findOperator,
  insertOperator,
  insertRoleIfNew,
  operatorPage,
  otherActiveAdmins,
  patchOperator,
} from './queries.js';
import type { CreateOperator, UpdateOperator } from './schemas.js';

export function isTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export function assertTimezone(tz: string | undefined, field = 'timezone') {
  if (tz !== undefined && !isTimezone(tz))
    invalid([{ field, message: `"${tz}" is not an IANA time zone (e.g. Europe/Berlin)` }]);
}

/**
 * The admin role is its own thing, not "every permission": only an admin, from a dashboard
 * session (a person who signed in), creates, changes or deletes an admin, or grants or removes
 * the admin role. An operator whose role holds every other permission is refused, and so is an
 * admin's API key: a leaked key must not be able to demote, disable or replace the admins.
 */
export function assertMayTouchAdmin(p: Principal, what: string) {
  if (!p.isAdmin)
    throw new HttpProblem(403, 'forbidden', `Only an admin can ${what}, whatever permissions another role holds.`);
  if (p.via !== 'session')
    throw new HttpProblem(403, 'session_required', `Only an admin's dashboard session can ${what}; an API key cannot.`);
}

/** The built-in admin role exists on every installation; made at start-up if missing. */
export async function ensureAdminRole(db: Kysely<Database>): Promise<string> {
  const existing = await findAdminRoleId(db);
  if (existing) return existing;
  const now = nowIso();
  await insertRoleIfNew(db, {
    id: newId(),
    name: ADMIN_ROLE_NAME,
    description: 'Holds every permission',
    permissions: JSON.stringify(ALL_PERMISSIONS),
    builtin: 1,
    created_at: now,
    updated_at: now,
  });
  return adminRoleId(db);
}

const OWNER_MARKER = 'owner_created';

/**
 * Creates the first operator (role admin) unless one exists. A marker row with a fixed key
 * makes this safe when several instances start at once or two setup forms race.
 * Returns the new operator's id, or null when an owner already existed.
 */
export async function createOwner(
  db: Kysely<Database>,
  owner: { email: string; name: string; password: string },
): Promise<string | null> {
  const roleId = await ensureAdminRole(db);
  const password_hash = await hashPassword(owner.password);
  return db.transaction().execute(async (tx) => {
    if (await anyOperator(tx)) return null;
    const now = nowIso();
    if (!(await claimMarker(tx, OWNER_MARKER, now))) return null;
    const id = newId();
    await insertOperator(tx, {
      id,
      email: owner.email.trim().toLowerCase(),
      name: owner.name,
      password_hash,
      role_id: roleId,
      status: 'active',
      timezone: 'UTC',
      created_at: now,
      updated_at: now,
    });
    return id;
  });
}

export const ownerExists = (db: Kysely<Database>): Promise<boolean> => anyOperator(db);

/** Checks the caller's own password (the auth module's confirmPassword, bound by the route). */
export type ConfirmPassword = (password: string | undefined, purpose: string) => Promise<void>;

async function roleFor(db: Kysely<Database>, roleId: string) {
  return (await findRole(db, roleId)) ?? invalid([{ field: 'role_id', message: 'no role with that id' }]);
}

export const listOperators = (db: Kysely<Database>, f: Parameters<typeof operatorPage>[1]) => operatorPage(db, f);

export const getOperator = async (db: Kysely<Database>, id: string) =>
  (await findOperator(db, id)) ?? notFound('operator');

/**
 * Rule 13: a new operator is a new credential for a person, so only a person makes one: from a
 * session, confirmed with their own password (`confirm`).
 */
export async function createOperator(
  db: Kysely<Database>,
  actor: Actor,
  b: Static<typeof CreateOperator>,
  confirm: ConfirmPassword,
) {
  const p = principalOf(actor);
  assertTimezone(b.timezone);
  const role = await roleFor(db, b.role_id);
  if (role.builtin) assertMayTouchAdmin(p, 'create an admin');
  assertHeld(p, rolePermissions(role));
  assertScopeHeld(p.scope, scopeOf(role)); // nor to accounts beyond your own
  // Refusals that need no password come first: only a creation that would go ahead spends a try.
  const email = b.email.trim().toLowerCase();
  if (await emailTaken(db, email)) conflict(`An operator with the email ${email} already exists.`);
  await confirm(b.current_password, 'create an operator');
  const password_hash = await hashPassword(b.password);
  const now = nowIso();
  const id = newId();
  await db.transaction().execute(async (tx) => {
    if (await emailTaken(tx, email)) conflict(`An operator with the email ${email} already exists.`);
    await insertOperator(tx, {
      id,
      email,
      name: b.name.trim(),
      password_hash,
      role_id: role.id,
      status: b.status ?? 'active',
      timezone: b.timezone ?? 'UTC',
      created_at: now,
      updated_at: now,
    });
    await audit(tx, actor, {
      action: 'operator.created',
      target_type: 'operator',
      target_id: id,
      details: { email, role: role.name },
    });
  });
  return (await findOperator(db, id))!;
}

/**
 * Name, time zone, role and status are open to API keys; a password, a new email or two-factor
 * turned off needs a person (rule 13): a session, confirmed with their own password (`confirm`).
 */
export async function updateOperator(
  db: Kysely<Database>,
  actor: Actor,
  id: string,
  b: Static<typeof UpdateOperator>,
  confirm: ConfirmPassword,
) {
  const p = principalOf(actor);
  assertTimezone(b.timezone);
  const email = b.email?.trim().toLowerCase();
  // Rule 13: a key never does what needs a person; a session proves it is one, again.
  const needsPerson = (target: { email: string }) =>
    b.password !== undefined || b.two_factor !== undefined || (email !== undefined && email !== target.email);
  type Target = NonNullable<Awaited<ReturnType<typeof findOperator>>>;
  /** Who may do this to whom; checked before the password is asked for, and again in the transaction. */
  const authorize = async (db: Kysely<Database>, target: Target) => {
    const currentRole = (await findRole(db, target.role_id))!;
    if (currentRole.builtin) assertMayTouchAdmin(p, 'change an admin');
    assertHeld(p, rolePermissions(currentRole)); // no managing someone more powerful than you
    assertScopeHeld(p.scope, scopeOf(currentRole)); // nor someone who sees more accounts
    const newRole = b.role_id && b.role_id !== target.role_id ? await roleFor(db, b.role_id) : null;
    if (newRole?.builtin) assertMayTouchAdmin(p, 'grant the admin role');
    if (newRole) assertHeld(p, rolePermissions(newRole));
    if (newRole) assertScopeHeld(p.scope, scopeOf(newRole));
    const self = target.id === p.operator.id;
    if (self && (newRole || (b.status && b.status !== target.status))) {
      conflict('You cannot change your own role or status; ask another operator.');
    }
    if (self && b.two_factor === false)
      conflict('Turn off your own two-factor sign-in from your profile, with a code.');
    return { currentRole, newRole, self };
  };
  const before = (await findOperator(db, id)) ?? notFound('operator');
  const confirmed = needsPerson(before);
  if (confirmed) {
    if (p.via !== 'session') {
      throw new HttpProblem(
        403,
        'session_required',
        "Setting an operator's password, changing their email or turning off their two-factor sign-in needs a dashboard session (and your current password); an API key cannot.",
      );
    }
    // Refusals that need no password come first: only a change that would go ahead spends a try.
    await authorize(db, before);
    await confirm(b.current_password, "change an operator's password, email or two-factor sign-in");
  }
  const password_hash = b.password ? await hashPassword(b.password) : undefined;
  await db.transaction().execute(async (tx) => {
    const target = (await findOperator(tx, id)) ?? notFound('operator');
    // The email changed meanwhile, so this now would change it: not what was confirmed.
    if (!confirmed && needsPerson(target)) conflict('The operator changed meanwhile; load it again.');
    const { currentRole, newRole, self } = await authorize(tx, target);
    const losesAdmin =
      currentRole.builtin === 1 &&
      target.status === 'active' &&
      ((newRole && !newRole.builtin) || b.status === 'disabled');
    if (losesAdmin && (await otherActiveAdmins(tx, target.id)) === 0)
      conflict('This is the last active admin; make another admin first.');
    if (email && email !== target.email && (await emailTaken(tx, email))) {
      conflict(`An operator with the email ${email} already exists.`);
    }
    await patchOperator(tx, target.id, {
      ...(email ? { email } : {}),
      ...(b.name !== undefined ? { name: b.name.trim() } : {}),
      ...(b.timezone !== undefined ? { timezone: b.timezone } : {}),
      ...(b.status ? { status: b.status } : {}),
      ...(newRole ? { role_id: newRole.id } : {}),
      ...(password_hash ? { password_hash } : {}),
      updated_at: nowIso(),
    });
    if (b.two_factor === false) await disableTwoFactor(tx, target.id);
    // A new password or 2FA turned off: whoever holds their sessions now must sign in again
    // (your own, when you set your own password, except the one you are using).
    let sessionsEnded = 0;
    if (b.status === 'disabled' || password_hash || b.two_factor === false) {
      sessionsEnded = await endSessions(tx, target.id, self ? p.sessionId : null);
    }
    const { password: _pw, current_password: _cpw, ...changes } = b;
    await audit(tx, actor, {
      action: 'operator.updated',
      target_type: 'operator',
      target_id: target.id,
      details: {
        email: target.email,
        changes,
        ...(password_hash ? { password_reset: true } : {}),
        ...(b.two_factor === false ? { two_factor_reset: true } : {}),
        ...(confirmed ? { confirmed_with: 'current_password' } : {}),
        sessions_ended: sessionsEnded,
      },
    });
  });
  return findOperator(db, id);
}

/** Deletes an operator with their sessions and API keys; never yourself nor the last active admin. */
export async function deleteOperator(db: Kysely<Database>, actor: Actor, id: string) {
  const p = principalOf(actor);
  await db.transaction().execute(async (tx) => {
    const target = (await findOperator(tx, id)) ?? notFound('operator');
    if (target.id === p.operator.id) conflict('You cannot delete yourself.');
    const role = (await findRole(tx, target.role_id))!;
    if (role.builtin) assertMayTouchAdmin(p, 'delete an admin');
    assertHeld(p, rolePermissions(role));
    assertScopeHeld(p.scope, scopeOf(role));
    if (role.builtin && target.status === 'active' && (await otherActiveAdmins(tx, target.id)) === 0) {
      conflict('This is the last active admin; make another admin first.');
    }
    await deleteOperatorRow(tx, target.id);
    await audit(tx, actor, {
      action: 'operator.deleted',
      target_type: 'operator',
      target_id: target.id,
      details: { email: target.email },
    });
  });
}
