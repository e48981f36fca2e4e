import type { Kysely } from 'kysely';
import { ALL_PERMISSIONS, ADMIN_ROLE_NAME } from '../../auth/permissions.js';
import { hashPassword } from '../../auth/passwords.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { HttpProblem, invalid } from '../../http/errors.js';
import type { Principal } from '../../types.js';

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
  const existing = await db.selectFrom('roles').select('id').where('builtin', '=', 1).executeTakeFirst();
  if (existing) return existing.id;
  const now = nowIso();
  const id = newId();
  await db
    .insertInto('roles')
    .values({
      id,
      name: ADMIN_ROLE_NAME,
      description: 'Holds every permission',
      permissions: JSON.stringify(ALL_PERMISSIONS),
      builtin: 1,
      created_at: now,
      updated_at: now,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  return (await db.selectFrom('roles').select('id').where('builtin', '=', 1).executeTakeFirstOrThrow()).id;
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
    const any = await tx.selectFrom('operators').select('id').limit(1).executeTakeFirst();
    if (any) return null;
    const now = nowIso();
    const claimed = await tx
      .insertInto('settings')
      .values({ key: OWNER_MARKER, value: 'true', updated_at: now })
      .onConflict((oc) => oc.column('key').doNothing())
      .returning('key')
      .executeTakeFirst();
    if (!claimed) return null;
    const id = newId();
    await tx
      .insertInto('operators')
      .values({
        id,
        email: owner.email.trim().toLowerCase(),
        name: owner.name,
        password_hash,
        role_id: roleId,
        status: 'active',
        timezone: 'UTC',
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  });
}

export async function ownerExists(db: Kysely<Database>): Promise<boolean> {
  return !!(await db.selectFrom('operators').select('id').limit(1).executeTakeFirst());
}
