import { Registry } from 'prom-client';
import { HttpProblem } from '../../http/errors.js';
import type { App } from '../../types.js';

/**
 * GET /metrics in Prometheus's text format (version 0.0.4). Outside /api, so not in the OpenAPI
 * document; its access is the METRICS_TOKEN (the guard: 404 while unset, 401 without it), and
 * neither the account IP allow-list nor the request rate limits (/api only) apply.
 */
export default async function metricsRoutes(app: App) {
  app.get(
    '/metrics',
    { config: { metrics: true, allowlistExempt: true }, schema: { hide: true } },
    async (req, reply) => {
      // The guard answers 404 while METRICS_TOKEN is unset, and metricsScrape exists whenever it is set.
      if (!app.metricsScrape) throw new HttpProblem(404, 'not_found', 'No route GET /metrics.');
      const body = await app.metricsScrape(req.log);
      return reply.header('cache-control', 'no-store').type(Registry.PROMETHEUS_CONTENT_TYPE).send(body);
    },
  );
}
