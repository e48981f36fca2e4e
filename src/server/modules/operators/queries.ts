import { sql, type Insertable, type Kysely, type Updateable } from 'kysely';
import { isPostgres } from '../../db/database.js';
import { containsText } from '../../db/like.js';
import type { Database, OperatorsTable, RolesTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';

export const operatorColumns = [
  'operators.id',
  'operators.email',
  'operators.name',
  'operators.role_id',
  'roles.name as role_name',
  'operators.status',
  'operators.timezone',
  'operators.created_at',
  'operators.updated_at',
] as const;

// Whether two-factor sign-in is on, as a boolean on both engines; the seed itself never leaves.
const twoFactor = sql<boolean>`(case when operators.totp_secret is null then false else true end)`.as('two_factor');

// Whether they hold the built-in admin role, which only an admin may grant, change or remove.
const admin = sql<boolean>`(case when roles.builtin = 1 then true else false end)`.as('admin');

export const operatorsWithRole = (db: Kysely<Database>) =>
  db
    .selectFrom('operators')
    .innerJoin('roles', 'roles.id', 'operators.role_id')
    .select(operatorColumns)
    .select([twoFactor, admin]);

export const findOperator = (db: Kysely<Database>, id: string) =>
  operatorsWithRole(db).where('operators.id', '=', id).executeTakeFirst();

/**
 * Active operators holding the built-in admin role, other than `exceptId`. Call inside the
 * transaction that would remove an admin: on PostgreSQL it locks the admin role row first, so
 * two admins disabling each other at once are serialized and cannot leave none (SQLite
 * transactions are serialized already).
 */
export async function otherActiveAdmins(db: Kysely<Database>, exceptId: string): Promise<number> {
  if (isPostgres(db)) await db.selectFrom('roles').select('id').where('builtin', '=', 1).forUpdate().execute();
  const row = await db
    .selectFrom('operators')
    .innerJoin('roles', 'roles.id', 'operators.role_id')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('roles.builtin', '=', 1)
    .where('operators.status', '=', 'active')
    .where('operators.id', '!=', exceptId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** One page of operators with their role, oldest first. */
export async function operatorPage(
  db: Kysely<Database>,
  f: { limit: number; cursor?: string; status?: 'active' | 'disabled'; role_id?: string; q?: string },
) {
  const after = decodeCursor(f.cursor, ['id']);
  let query = operatorsWithRole(db)
    .orderBy('operators.id')
    .limit(f.limit + 1);
  if (after) query = query.where('operators.id', '>', after.id);
  if (f.status) query = query.where('operators.status', '=', f.status);
  if (f.role_id) query = query.where('operators.role_id', '=', f.role_id);
  const q = f.q;
  if (q)
    query = query.where((eb) =>
      eb.or([containsText(eb.ref('operators.email'), q), containsText(eb.ref('operators.name'), q)]),
    );
  return pageOf(await query.execute(), f.limit, (r) => ({ id: r.id }));
}

/** Whether anyone signs in with this email: an operator, or a traffic provider's portal user (one sign-in page for both). */
export const emailTaken = async (db: Kysely<Database>, email: string) =>
  !!(await db.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst()) ||
  !!(await db.selectFrom('provider_users').select('id').where('email', '=', email).executeTakeFirst());

export const anyOperator = async (db: Kysely<Database>) =>
  !!(await db.selectFrom('operators').select('id').limit(1).executeTakeFirst());

export const insertOperator = (db: Kysely<Database>, row: Insertable<OperatorsTable>) =>
  db.insertInto('operators').values(row).execute();

export const patchOperator = (db: Kysely<Database>, id: string, patch: Updateable<OperatorsTable>) =>
  db.updateTable('operators').set(patch).where('id', '=', id).execute();

export const deleteOperatorRow = (db: Kysely<Database>, id: string) =>
  db.deleteFrom('operators').where('id', '=', id).execute();

/** Ends the operator's sessions but `keep` (the one in use); how many ended. */
export async function endSessions(db: Kysely<Database>, operatorId: string, keep: string | null): Promise<number> {
  const ended = await db
    .deleteFrom('sessions')
    .where('operator_id', '=', operatorId)
    .$if(keep !== null, (q) => q.where('id', '!=', keep!))
    .executeTakeFirst();
  return Number(ended.numDeletedRows);
}

const adminRole = (db: Kysely<Database>) => db.selectFrom('roles').select('id').where('builtin', '=', 1);

export const findAdminRoleId = async (db: Kysely<Database>) => (await adminRole(db).executeTakeFirst())?.id;

/** The admin role's id; throws (Kysely's NoResultError) when there is none. */
export const adminRoleId = async (db: Kysely<Database>) => (await adminRole(db).executeTakeFirstOrThrow()).id;

/** Adds the role unless one of that name exists (another instance made it meanwhile). */
export const insertRoleIfNew = (db: Kysely<Database>, row: Insertable<RolesTable>) =>
  db
    .insertInto('roles')
    .values(row)
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();

/** Claims a one-time marker in settings; false when it was claimed before. */
export async function claimMarker(db: Kysely<Database>, key: string, now: string): Promise<boolean> {
  const claimed = await db
    .insertInto('settings')
    .values({ key, value: 'true', updated_at: now })
    .onConflict((oc) => oc.column('key').doNothing())
    .returning('key')
    .executeTakeFirst();
  return !!claimed;
}
