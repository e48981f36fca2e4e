import { Type } from 'typebox';
import { verifyPassword, hashPassword } from '../../auth/passwords.js';
import { nowIso } from '../../db/ids.js';
import { invalid } from '../../http/errors.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { findOperator } from '../operators/queries.js';
import { Operator, Password, PersonName, Timezone } from '../operators/schemas.js';
import { assertTimezone } from '../operators/service.js';

const Profile = Type.Object(
  {
    operator: Operator,
    permissions: Type.Array(Type.String(), { description: 'What your role holds' }),
  },
  { title: 'Profile' },
);

export default async function profileRoutes(app: App) {
  const profileOf = async (id: string, permissions: Iterable<string>) => ({
    operator: (await findOperator(app.db, id))!,
    permissions: [...permissions].sort(),
  });

  app.get(
    '/api/profile',
    {
      config: { sessionOnly: true },
      schema: { operationId: 'getProfile', tags: ['Profile'], summary: 'Your own profile', response: { 200: Profile } },
    },
    async (req) => {
      const p = principalOf(req);
      return profileOf(p.operator.id, p.rolePermissions);
    },
  );

  app.patch(
    '/api/profile',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'updateProfile',
        tags: ['Profile'],
        summary: 'Change your name or time zone',
        body: Type.Object({ name: Type.Optional(PersonName), timezone: Type.Optional(Timezone) }, { additionalProperties: false, minProperties: 1 }),
        response: { 200: Profile },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const { name, timezone } = req.body;
      assertTimezone(timezone);
      await app.db
        .updateTable('operators')
        .set({ ...(name !== undefined ? { name: name.trim() } : {}), ...(timezone !== undefined ? { timezone } : {}), updated_at: nowIso() })
        .where('id', '=', p.operator.id)
        .execute();
      return profileOf(p.operator.id, p.rolePermissions);
    },
  );

  app.post(
    '/api/profile/password',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'changePassword',
        tags: ['Profile'],
        summary: 'Change your password',
        description: 'Needs your current password. Every other session of yours ends; this one stays.',
        body: Type.Object(
          { current_password: Type.String({ minLength: 1, maxLength: 256 }), new_password: Password },
          { additionalProperties: false },
        ),
        response: { 204: Type.Null({ description: 'Changed' }) },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const row = await app.db.selectFrom('operators').select('password_hash').where('id', '=', p.operator.id).executeTakeFirstOrThrow();
      if (!(await verifyPassword(row.password_hash, req.body.current_password))) {
        invalid([{ field: 'current_password', message: 'is not your current password' }]);
      }
      const password_hash = await hashPassword(req.body.new_password);
      await app.db.transaction().execute(async (tx) => {
        await tx.updateTable('operators').set({ password_hash, updated_at: nowIso() }).where('id', '=', p.operator.id).execute();
        await tx.deleteFrom('sessions').where('operator_id', '=', p.operator.id).where('id', '!=', p.sessionId!).execute();
        await audit(tx, req, { action: 'profile.password_changed', target_type: 'operator', target_id: p.operator.id });
      });
      return reply.status(204).send(null);
    },
  );
}
