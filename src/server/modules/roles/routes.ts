import { Type } from 'typebox';
import type { Permission } from '../../auth/permissions.js';
import { newId, nowIso } from '../../db/ids.js';
import { conflict, HttpProblem, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, Page, PageQuery, pageOf } from '../../http/pagination.js';
import { principalOf, type App, type Principal } from '../../types.js';
import { audit } from '../audit/service.js';
import { findRole, findRoleByName, toRole } from './queries.js';
import { CreateRole, IdParams, Role, UpdateRole } from './schemas.js';

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

export default async function roleRoutes(app: App) {
  app.get(
    '/api/roles',
    {
      config: { permission: 'roles:view' },
      schema: {
        operationId: 'listRoles',
        tags: ['Roles'],
        summary: 'Roles',
        querystring: Type.Object({ ...PageQuery }, { additionalProperties: false }),
        response: { 200: Page(Role, 'RolePage') },
      },
    },
    async (req) => {
      const { limit, cursor } = req.query;
      const after = decodeCursor(cursor, ['id']);
      let q = app.db
        .selectFrom('roles')
        .selectAll()
        .orderBy('id')
        .limit(limit + 1);
      if (after) q = q.where('id', '>', after.id);
      const page = pageOf(await q.execute(), limit, (r) => ({ id: r.id }));
      return { ...page, data: page.data.map(toRole) };
    },
  );

  app.get(
    '/api/roles/:id',
    {
      config: { permission: 'roles:view' },
      schema: {
        operationId: 'getRole',
        tags: ['Roles'],
        summary: 'One role',
        params: IdParams,
        response: { 200: Role, ...problems(404) },
      },
    },
    async (req) => toRole((await findRole(app.db, req.params.id)) ?? notFound('role')),
  );

  app.post(
    '/api/roles',
    {
      config: { permission: 'roles:edit' },
      schema: {
        operationId: 'createRole',
        tags: ['Roles'],
        summary: 'Create a role',
        body: CreateRole,
        response: { 201: Role, ...problems(409) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const { name, description = '', permissions } = req.body;
      assertHeld(p, permissions);
      const now = nowIso();
      const row = {
        id: newId(),
        name: name.trim(),
        description,
        permissions: JSON.stringify(permissions),
        builtin: 0,
        created_at: now,
        updated_at: now,
      };
      await app.db.transaction().execute(async (tx) => {
        if (await findRoleByName(tx, row.name)) conflict(`A role named "${row.name}" already exists.`);
        await tx.insertInto('roles').values(row).execute();
        await audit(tx, req, {
          action: 'role.created',
          target_type: 'role',
          target_id: row.id,
          details: { name: row.name, permissions },
        });
      });
      return reply.status(201).send(toRole(row));
    },
  );

  app.patch(
    '/api/roles/:id',
    {
      config: { permission: 'roles:edit' },
      schema: {
        operationId: 'updateRole',
        tags: ['Roles'],
        summary: 'Change a role',
        description: 'Changes apply on the next request of every operator and API key holding the role.',
        params: IdParams,
        body: UpdateRole,
        response: { 200: Role, ...problems(404, 409) },
      },
    },
    async (req) => {
      const p = principalOf(req);
      return app.db.transaction().execute(async (tx) => {
        const role = (await findRole(tx, req.params.id)) ?? notFound('role');
        if (role.builtin) conflict('The built-in admin role cannot be changed.');
        const { name, description, permissions } = req.body;
        // Changing a role you could not have made is refused too, in either direction.
        assertHeld(p, JSON.parse(role.permissions));
        if (permissions) assertHeld(p, permissions);
        if (name !== undefined && name.trim() !== role.name) {
          if (await findRoleByName(tx, name.trim())) conflict(`A role named "${name.trim()}" already exists.`);
        }
        const patch = {
          ...(name !== undefined ? { name: name.trim() } : {}),
          ...(description !== undefined ? { description } : {}),
          ...(permissions ? { permissions: JSON.stringify(permissions) } : {}),
          updated_at: nowIso(),
        };
        await tx.updateTable('roles').set(patch).where('id', '=', role.id).execute();
        await audit(tx, req, {
          action: 'role.updated',
          target_type: 'role',
          target_id: role.id,
          details: { before: { name: role.name, permissions: JSON.parse(role.permissions) }, after: req.body },
        });
        return toRole({ ...role, ...patch });
      });
    },
  );

  app.delete(
    '/api/roles/:id',
    {
      config: { permission: 'roles:edit' },
      schema: {
        operationId: 'deleteRole',
        tags: ['Roles'],
        summary: 'Delete a role no operator holds',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      await app.db.transaction().execute(async (tx) => {
        const role = (await findRole(tx, req.params.id)) ?? notFound('role');
        if (role.builtin) conflict('The built-in admin role cannot be deleted.');
        assertHeld(p, JSON.parse(role.permissions));
        const used = await tx
          .selectFrom('operators')
          .select('id')
          .where('role_id', '=', role.id)
          .limit(1)
          .executeTakeFirst();
        if (used) conflict('Operators still hold this role; give them another role first.');
        await tx.deleteFrom('roles').where('id', '=', role.id).execute();
        await audit(tx, req, {
          action: 'role.deleted',
          target_type: 'role',
          target_id: role.id,
          details: { name: role.name },
        });
      });
      return reply.status(204).send(null);
    },
  );
}
