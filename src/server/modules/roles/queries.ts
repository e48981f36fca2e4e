import type { Insertable, Kysely, Updateable } from 'kysely';
import { ALL_PERMISSIONS } from '../../auth/permissions.js';
import { rolePermissions } from '../../auth/authenticate.js';
import type { Database, Role, RolesTable } from '../../db/tables.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';

const idList = (s: string | null) => (s === null ? null : (JSON.parse(s) as string[]));

/** The API shape of a role's scope (null: all). */
export const scopeOf = (r: { scope_traffic_provider_ids: string | null; scope_partner_ids: string | null }) => ({
  traffic_provider_ids: idList(r.scope_traffic_provider_ids),
  partner_ids: idList(r.scope_partner_ids),
});

export const toRole = (r: Role) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  permissions: r.builtin ? [...ALL_PERMISSIONS] : [...rolePermissions(r)],
  builtin: r.builtin === 1,
  scope: r.builtin ? { traffic_provider_ids: null, partner_ids: null } : scopeOf(r),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const findRole = (db: Kysely<Database>, id: string) =>
  db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst();

export const findRoleByName = (db: Kysely<Database>, name: string) =>
  db.selectFrom('roles').selectAll().where('name', '=', name).executeTakeFirst();

/** One page of roles, oldest first, in the API shape. */
export async function rolePage(db: Kysely<Database>, f: { limit: number; cursor?: string }) {
  const after = decodeCursor(f.cursor, ['id']);
  let q = db
    .selectFrom('roles')
    .selectAll()
    .orderBy('id')
    .limit(f.limit + 1);
  if (after) q = q.where('id', '>', after.id);
  const page = pageOf(await q.execute(), f.limit, (r) => ({ id: r.id }));
  return { ...page, data: page.data.map(toRole) };
}

export const insertRole = (db: Kysely<Database>, row: Insertable<RolesTable>) =>
  db.insertInto('roles').values(row).execute();

export const patchRole = (db: Kysely<Database>, id: string, patch: Updateable<RolesTable>) =>
  db.updateTable('roles').set(patch).where('id', '=', id).execute();

export const deleteRoleRow = (db: Kysely<Database>, id: string) =>
  db.deleteFrom('roles').where('id', '=', id).execute();

/** Whether any operator holds the role. */
export const roleHeld = async (db: Kysely<Database>, id: string) =>
  !!(await db.selectFrom('operators').select('id').where('role_id', '=', id).limit(1).executeTakeFirst());

/** Those of `ids` that name a live (not archived) row of `table`. */
export const idsThatExist = async (db: Kysely<Database>, table: 'traffic_providers' | 'partners', ids: string[]) =>
  (await db.selectFrom(table).select('id').where('id', 'in', ids).where('archived_at', 'is', null).execute()).map(
    (r) => r.id,
  );
