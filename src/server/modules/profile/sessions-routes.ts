import { Type } from 'typebox';
import { Page, PageQuery } from '../../http/pagination.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { listMySessions, revokeMyOtherSessions, revokeMySession } from './service.js';

// The routes for one's own sessions (the use cases are in service.ts).

const Session = Type.Object(
  {
    id: Type.String(),
    created_at: Type.String({ format: 'date-time', description: 'When you signed in' }),
    last_seen_at: Type.String({ format: 'date-time', description: 'Last request (kept to the minute)' }),
    ip: Type.String(),
    user_agent: Type.String(),
    device: Type.String({ description: 'Browser and system, read from the user agent, e.g. "Chrome on Linux"' }),
    current: Type.Boolean({ description: 'The session making this request' }),
  },
  { title: 'Session' },
);

export default async function sessionRoutes(app: App) {
  app.get(
    '/api/profile/sessions',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'listMySessions',
        tags: ['Profile'],
        summary: 'Your signed-in sessions',
        description:
          'Every live session of yours, newest sign-in first (a stable order to page through: last_seen_at changes as ' +
          'sessions are used); ones idle past the timeout have ended and are not listed.',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: Page(Session, 'SessionPage') },
      },
    },
    async (req) => listMySessions(app.db, actorOf(req), req.query, app.config.sessionIdleMinutes),
  );

  app.delete(
    '/api/profile/sessions/:id',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'revokeMySession',
        tags: ['Profile'],
        summary: 'Sign out one of your sessions',
        description:
          "Its token stops working on the next request. Your own current session may be ended this way too (like logout). 404 for anyone else's.",
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 204: Type.Null({ description: 'Signed out' }), ...problems(404) },
      },
    },
    async (req, reply) => {
      await revokeMySession(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/profile/sessions/revoke-others',
    {
      config: { sessionOnly: true },
      schema: {
        operationId: 'revokeMyOtherSessions',
        tags: ['Profile'],
        summary: 'Sign out everywhere else',
        description: 'Ends every session of yours except this one. API keys are not sessions and keep working.',
        response: {
          200: Type.Object(
            { revoked: Type.Integer({ description: 'How many sessions ended' }) },
            { title: 'SessionsRevoked' },
          ),
        },
      },
    },
    async (req) => revokeMyOtherSessions(app.db, actorOf(req)),
  );
}
