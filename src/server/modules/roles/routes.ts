import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import { Page, PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { CreateRole, IdParams, Role, UpdateRole } from './schemas.js';
import { createRole, deleteRole, getRole, listRoles, updateRole } from './service.js';

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
    async (req) => listRoles(app.db, req.query),
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
    async (req) => getRole(app.db, req.params.id),
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
    async (req, reply) => reply.status(201).send(await createRole(app.db, actorOf(req), req.body)),
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
    async (req) => updateRole(app.db, actorOf(req), req.params.id, req.body),
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
      await deleteRole(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
