import type { Kysely } from 'kysely';
import type { Static } from 'typebox';
import type { Permission } from '../../auth/permissions.js';
import { newId, nowIso } from '../../db/ids.js';
import type { Database } from '../../db/tables.js';
import { conflict, HttpProblem, notFound } from '../../http/errors.js';
import { principalOf, type Principal } from '../../types.js';
import { audit, type Actor } from '../audit/service.js';
import {
  deleteRoleRow,
  findRole,
  findRoleByName,
  insertRole,
  patchRole,
  roleHeld,
  rolePage,
  toRole,
} from './queries.js';
import type { CreateRole, UpdateRole } from './schemas.js';
import { assertScopeHeld, checkRoleScope, scopeColumns, scopeOf } from './scope.js';

/**
 * Nobody hands out permissions they do not hold themselves. For an API key that means its
 * effective rights (scopes ∩ role): a key must not mint a role or an operator stronger than it.
 */
export function assertHeld(p: Principal, permissions: Iterable<string>) {
  const missing = [...permissions].filter((x) => !p.permissions.has(x as Permission));
  if (missing.length) {
    throw new HttpProblem(
      403,
      'forbidden',
      `You cannot grant permissions you do not hold yourself: ${missing.join(', ')}.`,
    );
  }
}

export const listRoles = (db: Kysely<Database>, f: { limit: number; cursor?: string }) => rolePage(db, f);

export const getRole = async (db: Kysely<Database>, id: string) => toRole((await findRole(db, id)) ?? notFound('role'));

export async function createRole(db: Kysely<Database>, actor: Actor, b: Static<typeof CreateRole>) {
  const { name, description = '', permissions, scope = { traffic_provider_ids: null, partner_ids: null } } = b;
  const p = principalOf(actor);
  assertHeld(p, permissions);
  await checkRoleScope(db, p, scope, permissions);
  const now = nowIso();
  const row = {
    id: newId(),
    name: name.trim(),
    description,
    permissions: JSON.stringify(permissions),
    builtin: 0,
    ...scopeColumns(scope),
    created_at: now,
    updated_at: now,
  };
  await db.transaction().execute(async (tx) => {
    if (await findRoleByName(tx, row.name)) conflict(`A role named "${row.name}" already exists.`);
    await insertRole(tx, row);
    await audit(tx, actor, {
      action: 'role.created',
      target_type: 'role',
      target_id: row.id,
      details: { name: row.name, permissions, scope },
    });
  });
  return toRole(row);
}

/** Changes apply on the next request of everyone holding the role. */
export async function updateRole(db: Kysely<Database>, actor: Actor, id: string, b: Static<typeof UpdateRole>) {
  const p = principalOf(actor);
  return db.transaction().execute(async (tx) => {
    const role = (await findRole(tx, id)) ?? notFound('role');
    if (role.builtin) conflict('The built-in admin role cannot be changed.');
    const { name, description, permissions, scope } = b;
    // Changing a role you could not have made is refused too, in either direction.
    assertHeld(p, JSON.parse(role.permissions));
    assertScopeHeld(p.scope, scopeOf(role));
    if (permissions) assertHeld(p, permissions);
    await checkRoleScope(tx, p, scope ?? scopeOf(role), permissions ?? JSON.parse(role.permissions));
    if (name !== undefined && name.trim() !== role.name) {
      if (await findRoleByName(tx, name.trim())) conflict(`A role named "${name.trim()}" already exists.`);
    }
    const patch = {
      ...(name !== undefined ? { name: name.trim() } : {}),
      ...(description !== undefined ? { description } : {}),
      ...(permissions ? { permissions: JSON.stringify(permissions) } : {}),
      ...(scope ? scopeColumns(scope) : {}),
      updated_at: nowIso(),
    };
    await patchRole(tx, role.id, patch);
    await audit(tx, actor, {
      action: 'role.updated',
      target_type: 'role',
      target_id: role.id,
      details: {
        before: { name: role.name, permissions: JSON.parse(role.permissions), scope: scopeOf(role) },
        after: b,
      },
    });
    return toRole({ ...role, ...patch });
  });
}

/** Only a role no operator holds, and never the built-in admin role. */
export async function deleteRole(db: Kysely<Database>, actor: Actor, id: string) {
  const p = principalOf(actor);
  await db.transaction().execute(async (tx) => {
    const role = (await findRole(tx, id)) ?? notFound('role');
    if (role.builtin) conflict('The built-in admin role cannot be deleted.');
    assertHeld(p, JSON.parse(role.permissions));
    assertScopeHeld(p.scope, scopeOf(role));
    if (await roleHeld(tx, role.id)) conflict('Operators still hold this role; give them another role first.');
    await deleteRoleRow(tx, role.id);
    await audit(tx, actor, {
      action: 'role.deleted',
      target_type: 'role',
      target_id: role.id,
      details: { name: role.name },
    });
  });
}
