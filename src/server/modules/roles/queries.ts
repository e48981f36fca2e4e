import type { Kysely } from 'kysely';
import { ALL_PERMISSIONS } from '../../auth/permissions.js';
import { rolePermissions } from '../../auth/authenticate.js';
import type { Database, Role } from '../../db/tables.js';

export const toRole = (r: Role) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  permissions: r.builtin ? [...ALL_PERMISSIONS] : [...rolePermissions(r)],
  builtin: r.builtin === 1,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const findRole = (db: Kysely<Database>, id: string) =>
  db.selectFrom('roles').selectAll().where('id', '=', id).executeTakeFirst();

export const findRoleByName = (db: Kysely<Database>, name: string) =>
  db.selectFrom('roles').selectAll().where('name', '=', name).executeTakeFirst();
