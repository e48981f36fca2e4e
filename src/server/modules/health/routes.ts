import { Type } from 'typebox';
import type { App } from '../../types.js';
import { readiness, RETRY_AFTER_S } from './readiness.js';

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')], {
      description: '`ok` (200): ready to serve; `unavailable` (503): the database does not answer or lacks migrations',
    }),
    version: Type.String(),
    database: Type.Object({ engine: Type.String(), ok: Type.Boolean({ description: 'Answered a query' }) }),
    migrations: Type.Object({
      ok: Type.Boolean({ description: 'Every migration this version needs is applied' }),
      applied: Type.Integer({ description: "How many of this version's migrations the database has" }),
      expected: Type.Integer({ description: 'How many migrations this version has' }),
      missing: Type.Array(Type.String(), { description: 'The ones not applied (restart the server to apply them)' }),
    }),
    uptime_s: Type.Integer(),
  },
  { title: 'Health' },
);

const Liveness = Type.Object(
  { status: Type.Literal('ok'), version: Type.String(), uptime_s: Type.Integer() },
  { title: 'Liveness' },
);

// An OpenAPI header map (name → schema), as @fastify/swagger reads a response's `headers`.
const RetryAfter = {
  'Retry-After': { type: 'integer', minimum: 0, description: 'Seconds to wait before asking again' },
};

export default async function healthRoutes(app: App, opts: { version: string }) {
  const uptime = () => Math.floor((Date.now() - app.startedAt) / 1000);

  app.get(
    '/api/health',
    {
      config: { public: true, allowlistExempt: true },
      schema: {
        operationId: 'getHealth',
        tags: ['Meta'],
        summary: 'Readiness: the database answers and is migrated (for load balancers)',
        description:
          'Answers 200 `ok` when this instance can serve: the database answers a real query (within 3 s) and has every ' +
          'migration this version needs. Else 503 `unavailable` with Retry-After: take the instance out of rotation, do not ' +
          'restart it (use /api/health/live for that). Not subject to the IP allow-list or the request rate limits.',
        response: {
          200: Health,
          503: { ...Health, description: 'Not ready; Retry-After says when to ask again', headers: RetryAfter },
        },
      },
    },
    async (req, reply) => {
      const r = await readiness(app.db);
      if (!r.ok) {
        req.log.warn({ err: r.error, migrations: r.migrations }, 'health: not ready');
        reply.status(503).header('retry-after', String(RETRY_AFTER_S));
      }
      return reply.send({
        status: r.ok ? 'ok' : 'unavailable',
        version: opts.version,
        database: { engine: app.config.database.engine, ok: r.databaseOk },
        migrations: r.migrations,
        uptime_s: uptime(),
      });
    },
  );

  app.get(
    '/api/health/live',
    {
      config: { public: true, allowlistExempt: true },
      schema: {
        operationId: 'getLiveness',
        tags: ['Meta'],
        summary: 'Liveness: the process is up and answering (no database)',
        description:
          'Always 200 while the process serves HTTP; touches no database, so a database outage never makes an orchestrator ' +
          'restart healthy instances. Not subject to the IP allow-list or the request rate limits.',
        response: { 200: Liveness },
      },
    },
    async () => ({ status: 'ok' as const, version: opts.version, uptime_s: uptime() }),
  );
}
