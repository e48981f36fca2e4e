import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { problems } from '../../http/openapi.js';
import { Page, PageQuery } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { confirmPassword } from '../auth/service.js';
import { IdParams } from '../roles/schemas.js';
import { CreateOperator, Operator, OperatorStatus, UpdateOperator } from './schemas.js';
import {
  createOperator,
  deleteOperator,
  getOperator,
  listOperators,
  updateOperator,
  type ConfirmPassword,
} from './service.js';

/**
 * The caller's own password, checked against their login rate limit (auth module; bound here
 * because auth's setup use case creates the owner through operators/service.ts).
 */
const confirmFor =
  (app: App, req: FastifyRequest): ConfirmPassword =>
  (password, purpose) =>
    confirmPassword(app.db, actorOf(req), password, purpose, req.routeOptions.url);

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
    async (req) => listOperators(app.db, req.query),
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
    async (req) => getOperator(app.db, req.params.id),
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
    async (req, reply) =>
      reply.status(201).send(await createOperator(app.db, actorOf(req), req.body, confirmFor(app, req))),
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
    async (req) => updateOperator(app.db, actorOf(req), req.params.id, req.body, confirmFor(app, req)),
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
      await deleteOperator(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );
}
