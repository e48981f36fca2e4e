import type { FastifyBaseLogger } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { observeQueries } from '../../db/query-observers.js';
import type { PartnerCall } from '../../distribution/partner-client.js';
import type { App } from '../../types.js';
import { VERSION } from '../../version.js';
import { readDatabaseGauges } from './queries.js';

// Prometheus metrics (API-CONTRACT section 4), one Registry per app: tests build many apps in
// one process, and prom-client's global registry would refuse the second app's metrics.
//
// Labels are bounded by construction: a request is labelled with its route PATTERN
// (`/api/postbacks/:token`), never its URL (which carries tokens and ids); partners by id and
// name (a few dozen); everything else by a fixed vocabulary.
//
// Everything here is off while METRICS_TOKEN is unset: no registry, no hooks, no cost per request.

/** What the rest of the server reports; a no-op while metrics are off. */
export interface MetricsSink {
  /** A lead stored by intake, with the status the provider was answered. */
  leadReceived(status: string): void;
  /** A partner answered (or did not) one delivery call. */
  partnerCall(partner: { id: string; name: string }, call: PartnerCall): void;
}

const NOOP: MetricsSink = { leadReceived: () => {}, partnerCall: () => {} };

declare module 'fastify' {
  interface FastifyInstance {
    metrics: MetricsSink;
    /** The text of one scrape (reads the database gauges first), or null while METRICS_TOKEN is unset. */
    metricsScrape: ((log: FastifyBaseLogger) => Promise<string>) | null;
  }
}

const PENDING = 'leadgate_pending_deliveries';

/** Label for a request no route matched (404s, dashboard files, targets refused before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

const SQL_OPERATIONS = new Set([
  'select',
  'insert',
  'update',
  'delete',
  'with',
  'begin',
  'commit',
  'rollback',
  'savepoint',
  'release',
  'pragma',
  'create',
  'alter',
  'drop',
]);

/** The statement's first keyword (a fixed vocabulary): never its text, which holds values and names. */
export function sqlOperation(text: string): string {
  const word = /^\s*([a-zA-Z]+)/.exec(text)?.[1]?.toLowerCase() ?? '';
  return SQL_OPERATIONS.has(word) ? word : 'other';
}

export function installMetrics(app: App): MetricsSink {
  if (app.config.metricsToken === null) {
    app.decorate('metrics', NOOP);
    app.decorate('metricsScrape', null);
    return NOOP;
  }
  const registry = new Registry();
  // Process CPU and memory, heap, GC, handles, event-loop lag (standard names, no prefix, so
  // the usual Node.js dashboards work as they are).
  collectDefaultMetrics({ register: registry });
  // Gauges whose names end in _total, which the exposition format keeps for counters (promtool
  // check metrics fails on them); the same counts by type remain (nodejs_active_handles{type}).
  for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'])
    registry.removeSingleMetric(name);

  new Gauge({
    name: 'leadgate_build_info',
    help: 'Always 1; the running version and the commit it was built from as labels',
    labelNames: ['version', 'commit'] as const,
    registers: [registry],
  }).set({ version: VERSION, commit: app.config.buildCommit ?? 'unknown' }, 1);

  const requests = new Histogram({
    name: 'leadgate_http_request_duration_seconds',
    help: 'HTTP requests answered, by method, route pattern and status code, with their duration',
    labelNames: ['method', 'route', 'status_code'] as const,
    // Intake answers within INTAKE_WAIT_MS (25 s by default): the top buckets see slow partners.
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const leads = new Counter({
    name: 'leadgate_leads_received_total',
    help: 'Leads stored by intake, by the status their traffic provider was answered (pending: still being delivered when the answer went)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const partnerCalls = new Histogram({
    name: 'leadgate_partner_call_duration_seconds',
    help: 'Delivery calls to partners, by partner and outcome (accepted, rejected, timeout, error), with their duration',
    labelNames: ['partner_id', 'partner', 'outcome'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
    registers: [registry],
  });
  const queries = new Histogram({
    name: 'leadgate_db_query_duration_seconds',
    help: 'Database statements run by this instance, by first keyword (select, insert, ...) and outcome (ok, error), with their duration',
    labelNames: ['operation', 'outcome'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5],
    registers: [registry],
  });
  // Read from the database at scrape time (queries.ts): the same value on every instance that
  // shares one database, so aggregate these with max(), not sum().
  const databaseUp = new Gauge({
    name: 'leadgate_database_up',
    help: '1 when the scrape could read the gauges below from the database, else 0',
    registers: [registry],
  });
  const pending = new Gauge({
    name: PENDING,
    help: 'Leads waiting for or in delivery (status pending), in the whole database',
    registers: [registry],
  });
  const capUsed = new Gauge({
    name: 'leadgate_partner_daily_cap_used',
    help: "Slots of each capped partner's daily cap taken today, in the partner's time zone (deliveries plus calls in progress)",
    labelNames: ['partner_id', 'partner'] as const,
    registers: [registry],
  });
  const capSize = new Gauge({
    name: 'leadgate_partner_daily_cap',
    help: "Each capped partner's daily cap (partners without a daily cap are not listed)",
    labelNames: ['partner_id', 'partner'] as const,
    registers: [registry],
  });

  app.addHook('onResponse', async (req, reply) => {
    requests.observe(
      { method: req.method, route: req.routeOptions.url ?? UNMATCHED_ROUTE, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
  const stopObserving = observeQueries(app.db, (e) => {
    queries.observe(
      { operation: sqlOperation(e.query.sql), outcome: e.level === 'error' ? 'error' : 'ok' },
      e.queryDurationMillis / 1000,
    );
  });
  app.addHook('onClose', async () => stopObserving());

  // At each scrape: first the gauges that live in the database. A failed read leaves them out
  // (and says so in leadgate_database_up) rather than failing the whole scrape.
  app.decorate('metricsScrape', async (log: FastifyBaseLogger) => {
    try {
      const g = await readDatabaseGauges(app.db, Date.now());
      if (!registry.getSingleMetric(PENDING)) registry.registerMetric(pending);
      pending.set(g.pending);
      capUsed.reset();
      capSize.reset();
      for (const p of g.caps) {
        capUsed.set({ partner_id: p.id, partner: p.name }, p.used);
        capSize.set({ partner_id: p.id, partner: p.name }, p.cap);
      }
      databaseUp.set(1);
    } catch (err) {
      log.warn({ err }, 'metrics: could not read the database gauges');
      // A gauge without labels always prints a value (0 after reset): unknown must not read as none pending.
      registry.removeSingleMetric(PENDING);
      capUsed.reset();
      capSize.reset();
      databaseUp.set(0);
    }
    return registry.metrics();
  });

  const sink: MetricsSink = {
    leadReceived: (status) => leads.inc({ status }),
    partnerCall: (partner, call) =>
      partnerCalls.observe(
        { partner_id: partner.id, partner: partner.name, outcome: call.outcome },
        call.duration_ms / 1000,
      ),
  };
  app.decorate('metrics', sink);
  return sink;
}
