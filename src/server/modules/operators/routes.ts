import { Type } from 'typebox';
import { rolePermissions } from '../../auth/authenticate.js';
import { hashPassword } from '../../auth/passwords.js';
import type { Kysely } from 'kysely';
import { newId, nowIso } from '../../db/ids.js';
import { containsText } from '../../db/like.js';
import type { Database } from '../../db/tables.js';
import { conflict, HttpProblem, invalid, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, Page, PageQuery, pageOf } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { confirmCurrentPassword } from '../auth/service.js';
import { findRole } from '../roles/queries.js';
import { assertHeld } from '../roles/service.js';
import { IdParams } from '../roles/schemas.js';
import { findOperator, operatorsWithRole, otherActiveAdmins } from './queries.js';
import { assertMayTouchAdmin, assertTimezone } from './service.js';
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
      let query = operatorsWithRole(app.db)
        .orderBy('operators.id')
        .limit(limit + 1);
      if (after) query = query.where('operators.id', '>', after.id);
      if (status) query = query.where('operators.status', '=', status);
      if (role_id) query = query.where('operators.role_id', '=', role_id);
      if (q)
        query = query.where((eb) =>
          eb.or([containsText(eb.ref('operators.email'), q), containsText(eb.ref('operators.name'), q)]),
        );
      return pageOf(await query.execute(), limit, (r) => ({ id: r.id }));
    },
  );

  app.get(
    '/api/operators/:id',
    {
      config: { permission: 'operators:view' },
      schema: {
        operationId: 'getOperator',
        tags: ['Operators'],
        summary: 'One operator',
        params: IdParams,
        response: { 200: Operator, ...problems(404) },
      },
    },
    async (req) => (await findOperator(app.db, req.params.id)) ?? notFound('operator'),
  );

  app.post(
    '/api/operators',
    {
      // Rule 13: a new operator is a new credential for a person (a password that signs in), so
      // only a person makes one: from a session, confirmed with their own password.
      config: { permission: 'operators:edit', sessionOnly: true },
      schema: {
        operationId: 'createOperator',
        tags: ['Operators'],
        summary: 'Create an operator',
        description:
          'You can only give a role whose permissions your own role holds, and only an admin gives the admin role. ' +
          'Creating an operator sets a password, so it is for dashboard sessions only (an API key gets 403 ' +
          '`session_required`) and takes your own `current_password`: 400 `validation_failed` naming it when wrong; ' +
          'wrong guesses count toward your login rate limit (429 `rate_limited`).',
        body: CreateOperator,
        response: { 201: Operator, ...problems(409, 429) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const b = req.body;
      assertTimezone(b.timezone);
      const role = await roleFor(app.db, b.role_id);
      if (role.builtin) assertMayTouchAdmin(p, 'create an admin');
      assertHeld(p, rolePermissions(role));
      // Refusals that need no password come first: only a creation that would go ahead spends a try.
      const email = b.email.trim().toLowerCase();
      if (await app.db.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst()) {
        conflict(`An operator with the email ${email} already exists.`);
      }
      await confirmCurrentPassword(app.db, req, p, b.current_password, 'create an operator');
      const password_hash = await hashPassword(b.password);
      const now = nowIso();
      const id = newId();
      await app.db.transaction().execute(async (tx) => {
        if (await tx.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst()) {
          conflict(`An operator with the email ${email} already exists.`);
        }
        await tx
          .insertInto('operators')
          .values({
            id,
            email,
            name: b.name.trim(),
            password_hash,
            role_id: role.id,
            status: b.status ?? 'active',
            timezone: b.timezone ?? 'UTC',
            created_at: now,
            updated_at: now,
          })
          .execute();
        await audit(tx, req, {
          action: 'operator.created',
          target_type: 'operator',
          target_id: id,
          details: { email, role: role.name },
        });
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
          'Name, time zone, role and status are open to API keys with operators:edit. What only a person may do, setting a ' +
          '`password`, changing the `email` or turning `two_factor` off (for anyone, yourself included), is for dashboard ' +
          'sessions only: an API key gets 403 `session_required`, whatever its scopes. It also takes your own ' +
          '`current_password`: 400 `validation_failed` naming it when missing or wrong, and wrong guesses count toward your ' +
          'login rate limit (429 `rate_limited`). Setting a password or turning two-factor off ends all their sessions. ' +
          'Disabling an operator ends their sessions and stops their API keys at once (the keys work again if the operator ' +
          'is re-enabled; revoke them to end them for good). You cannot change your own role or status, nor leave the ' +
          'installation without an active admin. Only an admin, from a dashboard session, changes an admin or grants or ' +
          'removes the admin role (403 `forbidden` to anyone else, whatever their permissions; 403 `session_required` ' +
          "to an admin's API key).",
        params: IdParams,
        body: UpdateOperator,
        response: { 200: Operator, ...problems(404, 409, 429) },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const b = req.body;
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
        const newRole = b.role_id && b.role_id !== target.role_id ? await roleFor(db, b.role_id) : null;
        if (newRole?.builtin) assertMayTouchAdmin(p, 'grant the admin role');
        if (newRole) assertHeld(p, rolePermissions(newRole));
        const self = target.id === p.operator.id;
        if (self && (newRole || (b.status && b.status !== target.status))) {
          conflict('You cannot change your own role or status; ask another operator.');
        }
        if (self && b.two_factor === false)
          conflict('Turn off your own two-factor sign-in from your profile, with a code.');
        return { currentRole, newRole, self };
      };
      const before = (await findOperator(app.db, req.params.id)) ?? notFound('operator');
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
        await authorize(app.db, before);
        await confirmCurrentPassword(
          app.db,
          req,
          p,
          b.current_password,
          "change an operator's password, email or two-factor sign-in",
        );
      }
      const password_hash = b.password ? await hashPassword(b.password) : undefined;
      await app.db.transaction().execute(async (tx) => {
        const target = (await findOperator(tx, req.params.id)) ?? notFound('operator');
        // The email changed meanwhile, so this now would change it: not what was confirmed.
        if (!confirmed && needsPerson(target)) conflict('The operator changed meanwhile; load it again.');
        const { currentRole, newRole, self } = await authorize(tx, target);
        const losesAdmin =
          currentRole.builtin === 1 &&
          target.status === 'active' &&
          ((newRole && !newRole.builtin) || b.status === 'disabled');
        if (losesAdmin && (await otherActiveAdmins(tx, target.id)) === 0)
          conflict('This is the last active admin; make another admin first.');
        if (
          email &&
          email !== target.email &&
          (await tx.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst())
        ) {
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
        // A new password or 2FA turned off: whoever holds their sessions now must sign in again
        // (your own, when you set your own password, except the one you are using).
        let sessionsEnded = 0;
        if (b.status === 'disabled' || password_hash || b.two_factor === false) {
          const ended = await tx
            .deleteFrom('sessions')
            .where('operator_id', '=', target.id)
            .$if(self && p.sessionId !== null, (q) => q.where('id', '!=', p.sessionId!))
            .executeTakeFirst();
          sessionsEnded = Number(ended.numDeletedRows);
        }
        const { password: _pw, current_password: _cpw, ...changes } = b;
        await audit(tx, req, {
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
        if (role.builtin) assertMayTouchAdmin(p, 'delete an admin');
        assertHeld(p, rolePermissions(role));
        if (role.builtin && target.status === 'active' && (await otherActiveAdmins(tx, target.id)) === 0) {
          conflict('This is the last active admin; make another admin first.');
        }
        await tx.deleteFrom('operators').where('id', '=', target.id).execute();
        await audit(tx, req, {
          action: 'operator.deleted',
          target_type: 'operator',
          target_id: target.id,
          details: { email: target.email },
        });
      });
      return reply.status(204).send(null);
    },
  );
}
