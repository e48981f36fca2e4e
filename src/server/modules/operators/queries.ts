import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../../db/database.js';
import type { Database } from '../../db/tables.js';

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
