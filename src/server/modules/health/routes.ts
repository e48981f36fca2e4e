import { sql } from 'kysely';
import { Type } from 'typebox';
import type { App } from '../../types.js';

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]),
    version: Type.String(),
    database: Type.Object({ engine: Type.String(), ok: Type.Boolean() }),
    uptime_s: Type.Integer(),
  },
  { title: 'Health' },
);

export default async function healthRoutes(app: App, opts: { version: string }) {
  app.get(
    '/api/health',
    {
      config: { public: true, allowlistExempt: true },
      schema: {
        operationId: 'getHealth',
        tags: ['Meta'],
        summary: 'Liveness and database check, for load balancers and monitors',
        description: 'Answers 503 with status "degraded" when the database does not answer. Not subject to the IP allow-list.',
        response: { 200: Health, 503: Health },
      },
    },
    async (_req, reply) => {
      const ok = await sql`select 1`.execute(app.db).then(() => true, () => false);
      return reply.status(ok ? 200 : 503).send({
        status: ok ? 'ok' : 'degraded',
        version: opts.version,
        database: { engine: app.config.database.engine, ok },
        uptime_s: Math.floor((Date.now() - app.startedAt) / 1000),
      });
    },
  );
}
