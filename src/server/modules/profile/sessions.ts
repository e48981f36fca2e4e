import { Type } from 'typebox';
import { decodeCursor, Page, PageQuery, pageOf } from '../../http/pagination.js';
import { notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';

// Order matters: Edge and Opera say "Chrome" too, Chrome says "Safari", Android says "Linux".
const BROWSERS: [RegExp, string][] = [
  [/Edg(e|A|iOS)?\//, 'Edge'],
  [/OPR\/|Opera/, 'Opera'],
  [/Firefox\/|FxiOS\//, 'Firefox'],
  [/HeadlessChrome\//, 'Headless Chrome'],
  [/Chrome\/|CriOS\/|Chromium\//, 'Chrome'],
  [/Safari\//, 'Safari'],
  [/^curl\//, 'curl'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad|iPod/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/CrOS/, 'ChromeOS'],
  [/Linux/, 'Linux'],
];

/** A short, human "Chrome on Linux" from a User-Agent; good enough to recognise a device. */
export function deviceOf(userAgent: string): string {
  const browser = BROWSERS.find(([re]) => re.test(userAgent))?.[1];
  const system = SYSTEMS.find(([re]) => re.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? (userAgent ? 'Unknown device' : 'Unknown client');
}

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
    async (req) => {
      const p = principalOf(req);
      const { limit, cursor } = req.query;
      const after = decodeCursor(cursor, ['created_at', 'id']);
      const since = new Date(Date.now() - app.config.sessionIdleMinutes * 60_000).toISOString();
      let q = app.db
        .selectFrom('sessions')
        .select(['id', 'created_at', 'last_seen_at', 'ip', 'user_agent'])
        .where('operator_id', '=', p.operator.id)
        .where('last_seen_at', '>=', since)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit + 1);
      // Session ids are random: the sign-in time orders them, the id breaks ties.
      if (after)
        q = q.where((eb) =>
          eb.or([
            eb('created_at', '<', after.created_at),
            eb.and([eb('created_at', '=', after.created_at), eb('id', '<', after.id)]),
          ]),
        );
      const page = pageOf(await q.execute(), limit, (r) => ({ created_at: r.created_at, id: r.id }));
      return {
        ...page,
        data: page.data.map((r) => ({ ...r, device: deviceOf(r.user_agent), current: r.id === p.sessionId })),
      };
    },
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
      const p = principalOf(req);
      const res = await app.db
        .deleteFrom('sessions')
        .where('id', '=', req.params.id)
        .where('operator_id', '=', p.operator.id)
        .executeTakeFirst();
      if (res.numDeletedRows === 0n) notFound('session');
      await audit(app.db, req, { action: 'profile.session_revoked', target_type: 'session', target_id: req.params.id });
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
    async (req) => {
      const p = principalOf(req);
      const res = await app.db
        .deleteFrom('sessions')
        .where('operator_id', '=', p.operator.id)
        .where('id', '!=', p.sessionId!)
        .executeTakeFirst();
      const revoked = Number(res.numDeletedRows);
      await audit(app.db, req, { action: 'profile.sessions_revoked', details: { revoked } });
      return { revoked };
    },
  );
}
