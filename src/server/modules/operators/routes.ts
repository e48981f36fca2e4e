import { Type } from 'typebox';
import { rolePermissions } from '../../auth/authenticate.js';
import { hashPassword } from '../../auth/passwords.js';
import type { Kysely } from 'kysely';
import { newId, nowIso } from '../../db/ids.js';
import { containsText } from '../../db/like.js';
import type { Database } from '../../db/tables.js';
import { conflict, invalid, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, Page, PageQuery, pageOf } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { findRole } from '../roles/queries.js';
import { assertHeld } from '../roles/routes.js';
import { IdParams } from '../roles/schemas.js';
import { findOperator, operatorsWithRole, otherActiveAdmins } from './queries.js';
import { assertTimezone } from './service.js';
import { CreateOperator, Operator, OperatorStatus, UpdateOperator } from './schemas.js';
import { disableTwoFactor } from '../profile/two-factor.js';

async function roleFor(db: Kysely<Database>, roleId: string) {
  return (await findRole(db, roleId)) ?? invalid([{ field: 'role_id', message: 'no role with that id' }]);
}

export default async function operatorRoutes(app: App) {
  app.get(
    '/api/operators',
    {
      config: { permission: 'operators:view' },
      schema: {
        operationId: 'listOperators',
        tags: ['Operators'],
        summary: 'Operators',
        querystring: Type.Object(
          {
            ...PageQuery,
            status: Type.Optional(OperatorStatus),
            role_id: Type.Optional(Type.String({ maxLength: 100 })),
            q: Type.Optional(Type.String({ maxLength: 200, description: 'Part of the email or name' })),
          },
          { additionalProperties: false },
        ),
        response: { 200: Page(Operator, 'OperatorPage') },
      },
    },
    async (req) => {
      const { limit, cursor, status, role_id, q } = req.query;
      const after = decodeCursor(cursor, ['id']);
      let query = operatorsWithRole(app.db).orderBy('operators.id').limit(limit + 1);
      if (after) query = query.where('operators.id', '>', after.id);
      if (status) query = query.where('operators.status', '=', status);
      if (role_id) query = query.where('operators.role_id', '=', role_id);
      if (q) query = query.where((eb) => eb.or([containsText(eb.ref('operators.email'), q), containsText(eb.ref('operators.name'), q)]));
      return pageOf(await query.execute(), limit, (r) => ({ id: r.id }));
    },
  );

  app.get(
    '/api/operators/:id',
    {
      config: { permission: 'operators:view' },
      schema: { operationId: 'getOperator', tags: ['Operators'], summary: 'One operator', params: IdParams, response: { 200: Operator, ...problems(404) } },
    },
    async (req) => (await findOperator(app.db, req.params.id)) ?? notFound('operator'),
  );

  app.post(
    '/api/operators',
    {
      config: { permission: 'operators:edit' },
      schema: {
        operationId: 'createOperator',
        tags: ['Operators'],
        summary: 'Create an operator',
        description: 'You can only give a role whose permissions your own role holds.',
        body: CreateOperator,
        response: { 201: Operator, ...problems(409) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const b = req.body;
      assertTimezone(b.timezone);
      const role = await roleFor(app.db, b.role_id);
      assertHeld(p, rolePermissions(role));
      const password_hash = await hashPassword(b.password);
      const now = nowIso();
      const id = newId();
      const email = b.email.trim().toLowerCase();
      await app.db.transaction().execute(async (tx) => {
        if (await tx.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst()) {
          conflict(`An operator with the email ${email} already exists.`);
        }
        await tx
          .insertInto('operators')
          .values({ id, email, name: b.name.trim(), password_hash, role_id: role.id, status: b.status ?? 'active', timezone: b.timezone ?? 'UTC', created_at: now, updated_at: now })
          .execute();
        await audit(tx, req, { action: 'operator.created', target_type: 'operator', target_id: id, details: { email, role: role.name } });
      });
      return reply.status(201).send((await findOperator(app.db, id))!);
    },
  );

  app.patch(
    '/api/operators/:id',
    {
      config: { permission: 'operators:edit' },
      schema: {
        operationId: 'updateOperator',
        tags: ['Operators'],
        summary: 'Change an operator',
        description:
          'Disabling an operator ends their sessions and stops their API keys at once (the keys work ' +
          'again if the operator is re-enabled; revoke them to end them for good). A password ' +
          'set here also ends their sessions. You cannot change your own role or status, nor leave ' +
          'the installation without an active admin.',
        params: IdParams,
        body: UpdateOperator,
        response: { 200: Operator, ...problems(404, 409) },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const b = req.body;
      assertTimezone(b.timezone);
      const password_hash = b.password ? await hashPassword(b.password) : undefined;
      await app.db.transaction().execute(async (tx) => {
        const target = (await findOperator(tx, req.params.id)) ?? notFound('operator');
        const currentRole = (await findRole(tx, target.role_id))!;
        assertHeld(p, rolePermissions(currentRole)); // no managing someone more powerful than you
        const newRole = b.role_id && b.role_id !== target.role_id ? await roleFor(tx, b.role_id) : null;
        if (newRole) assertHeld(p, rolePermissions(newRole));
        const self = target.id === p.operator.id;
        if (self && (newRole || (b.status && b.status !== target.status))) {
          conflict('You cannot change your own role or status; ask another operator.');
        }
        if (self && b.two_factor === false) conflict('Turn off your own two-factor sign-in from your profile, with a code.');
        const losesAdmin = currentRole.builtin === 1 && target.status === 'active' && ((newRole && !newRole.builtin) || b.status === 'disabled');
        if (losesAdmin && (await otherActiveAdmins(tx, target.id)) === 0) conflict('This is the last active admin; make another admin first.');
        const email = b.email?.trim().toLowerCase();
        if (email && email !== target.email && (await tx.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst())) {
          conflict(`An operator with the email ${email} already exists.`);
        }
        await tx
          .updateTable('operators')
          .set({
            ...(email ? { email } : {}),
            ...(b.name !== undefined ? { name: b.name.trim() } : {}),
            ...(b.timezone !== undefined ? { timezone: b.timezone } : {}),
            ...(b.status ? { status: b.status } : {}),
            ...(newRole ? { role_id: newRole.id } : {}),
            ...(password_hash ? { password_hash } : {}),
            updated_at: nowIso(),
          })
          .where('id', '=', target.id)
          .execute();
        if (b.two_factor === false) await disableTwoFactor(tx, target.id);
        if (b.status === 'disabled' || password_hash) await tx.deleteFrom('sessions').where('operator_id', '=', target.id).execute();
        const { password: _omit, ...changes } = b;
        await audit(tx, req, {
          action: 'operator.updated',
          target_type: 'operator',
          target_id: target.id,
          details: { email: target.email, changes, ...(password_hash ? { password_reset: true } : {}) },
        });
      });
      return findOperator(app.db, req.params.id);
    },
  );

  app.delete(
    '/api/operators/:id',
    {
      config: { permission: 'operators:edit' },
      schema: {
        operationId: 'deleteOperator',
        tags: ['Operators'],
        summary: 'Delete an operator, their sessions and API keys',
        params: IdParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...problems(404, 409) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      await app.db.transaction().execute(async (tx) => {
        const target = (await findOperator(tx, req.params.id)) ?? notFound('operator');
        if (target.id === p.operator.id) conflict('You cannot delete yourself.');
        const role = (await findRole(tx, target.role_id))!;
        assertHeld(p, rolePermissions(role));
        if (role.builtin && target.status === 'active' && (await otherActiveAdmins(tx, target.id)) === 0) {
          conflict('This is the last active admin; make another admin first.');
        }
        await tx.deleteFrom('operators').where('id', '=', target.id).execute();
        await audit(tx, req, { action: 'operator.deleted', target_type: 'operator', target_id: target.id, details: { email: target.email } });
      });
      return reply.status(204).send(null);
    },
  );
}
