import Fastify, { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import pino, { type DestinationStream } from 'pino';
import type { Config } from './config.js';
import type { DB } from './db/database.js';
import { openReader } from './db/reader.js';
import { installAuth } from './auth/guard.js';
import { installDistribution } from './distribution/runner.js';
import { installEvents } from './events/install.js';
import { checkpointerOf } from './db/database.js';
import { installJobs } from './jobs/scheduler.js';
import { deliveryRecoveryJob } from './jobs/delivery-recovery.js';
import { eventDispatchJob } from './jobs/event-dispatch.js';
import { eventPurgeJob } from './jobs/event-purge.js';
import { statusPullsJob } from './jobs/status-pulls.js';
import { providerSilenceJob } from './jobs/provider-silence.js';
import { reviewAlertJob } from './jobs/review-alert.js';
import { retentionJob } from './jobs/retention.js';
import { reportFoldJob } from './jobs/report-folds.js';
import { idempotencyPurgeJob } from './jobs/idempotency-purge.js';
import { providerLogJob } from './jobs/provider-log.js';
import { injectionRulesJob } from './jobs/injection-rules.js';
import { injectionsJob } from './jobs/injections.js';
import { loadShippedRanges } from './geo/ip-country.js';
import { openSecrets } from './secrets/keys.js';
import { importsJob } from './jobs/imports.js';
import { chainDue, checkpointAll } from './modules/provider-log/chain.js';
import { sqliteCheckpointJob } from './jobs/sqlite-checkpoint.js';
import { postbackDestination } from './modules/provider-postbacks/destination.js';
import { webhookDestination } from './modules/webhooks/destination.js';
import { StatusPuller } from './modules/status-pull/runner.js';
import { checkSilentProviders } from './modules/traffic-providers/silence.js';
import { IDEMPOTENCY_TTL_MS, purgeIdempotencyKeys } from './modules/intake/service.js';
import { frameworkErrorHandler, HttpProblem, installErrorHandlers } from './http/errors.js';
import { installOpenApi, installRouteRules } from './http/openapi.js';
import { loggedUrl } from './http/log-redaction.js';
import { installLiveRequests, type LiveRequests } from './http/live-requests.js';
import { rewriteRequestTarget } from './http/request-target.js';
import { installRateLimit } from './http/rate-limit.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { installSpa } from './http/spa.js';
import { buildSerializer, validatorCompiler } from './http/validation.js';
import type { App, RouteInfo } from './types.js';
import { VERSION } from './version.js';
import apiKeyRoutes from './modules/api-keys/routes.js';
import blocklistRoutes from './modules/quality/blocklist-routes.js';
import qualitySettingsRoutes from './modules/quality/settings-routes.js';
import reviewRoutes from './modules/quality/review-routes.js';
import { alertWaitingReviews } from './modules/quality/review-service.js';
import { MAX_WINDOW_MINUTES, purgeVelocityKeys } from './modules/quality/velocity.js';
import auditRoutes from './modules/audit/routes.js';
import authRoutes from './modules/auth/routes.js';
import healthRoutes from './modules/health/routes.js';
import autologinRoutes from './modules/autologin/routes.js';
import { installMetrics } from './modules/metrics/metrics.js';
import metricsRoutes from './modules/metrics/routes.js';
import operatorRoutes from './modules/operators/routes.js';
import permissionRoutes from './modules/permissions/routes.js';
import profileRoutes from './modules/profile/routes.js';
import roleRoutes from './modules/roles/routes.js';
import securityRoutes from './modules/security/routes.js';
import partnersRoutes from './modules/partners/routes.js';
import trafficProvidersRoutes from './modules/traffic-providers/routes.js';
import campaignsRoutes from './modules/campaigns/routes.js';
import flowsRoutes from './modules/flows/routes.js';
import leadsRoutes from './modules/leads/routes.js';
import injectionRuleRoutes from './modules/injection-rules/routes.js';
import { RuleRunner } from './modules/injection-rules/runner.js';
import injectionRoutes from './modules/injections/routes.js';
import { createImportInjection } from './modules/injections/service.js';
import importRoutes from './modules/imports/routes.js';
import { ImportWorker } from './modules/imports/worker.js';
import { injectionRoute, InjectionWorker } from './modules/injections/worker.js';
import analyticsRoutes from './modules/analytics/routes.js';
import { foldDue } from './modules/analytics/attempt-folds.js';
import { foldLeadDays } from './modules/analytics/lead-folds.js';
import intakeRoutes from './modules/intake/routes.js';
import postbackRoutes from './modules/postbacks/routes.js';
import licenceRoutes from './modules/licence/routes.js';
import privacyRoutes from './modules/privacy/routes.js';
import retentionRoutes from './modules/privacy/retention-routes.js';
import { runRetention } from './modules/privacy/retention-service.js';
import { purgeOldContactViews } from './modules/privacy/service.js';
import { protectBlocklistKeys } from './modules/quality/match-secret.js';
import notificationRoutes from './modules/notifications/routes.js';
import routingRoutes from './modules/routing/routes.js';
import webhookRoutes from './modules/webhooks/routes.js';
import providerPostbackRoutes from './modules/provider-postbacks/routes.js';
import statusPullRoutes from './modules/status-pull/routes.js';
import conversionRoutes from './modules/conversions/routes.js';
import hostingRoutes from './modules/hosting/routes.js';
import providerUsersRoutes from './modules/provider-users/routes.js';
import portalRoutes from './modules/portal/routes.js';
import providerLogRoutes from './modules/provider-log/routes.js';

export interface BuildOptions {
  /** Where log lines go (tests capture them); default stdout. */
  logStream?: DestinationStream;
  /** The built dashboard to serve at `/`; default dist/web (tests point it elsewhere). */
  webDir?: string;
  /** Called with every statement the reader (db/reader.ts) runs on SQLite (tests). */
  onReaderQuery?: (sql: string) => void;
}

function loggerOptions(config: Config, stream: DestinationStream): FastifyServerOptions['logger'] {
  return {
    level: config.logLevel,
    stream,
    redact: {
      paths: ['req.headers.authorization', '*.password', '*.secret', '*.token', '*.current_password', '*.new_password'],
      censor: '[redacted]',
    },
    serializers: {
      // The URL is rebuilt from the matched route's decoded parameters, tokens redacted.
      req: (req: FastifyRequest & { socket?: { remoteAddress?: string } }) => ({
        method: req.method,
        url: loggedUrl(req),
        ip: req.ip ?? req.socket?.remoteAddress,
      }),
    },
  } as FastifyServerOptions['logger'];
}

/** One line per request: "request completed" carries the method, URL and address too. */
class RequestLog extends LogController {
  override incomingRequest(req: FastifyRequest) {
    req.log.debug({ req }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply) {
    if (error) reply.log.error({ req, res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.info({ req, res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

export async function buildApp(config: Config, db: DB, opts: BuildOptions = {}): Promise<App> {
  // The keys that seal stored secrets, before anything reads one (SecretKeyError: start-up refused).
  await openSecrets(config, db);
  // Blocklist email and phone keys stored in clear by an earlier release become HMAC digests.
  await protectBlocklistKeys(db);
  // Request logging is one line per request ("request completed", with method, URL, status and
  // time; "incoming request" only at debug), written to stdout asynchronously: Fastify's two
  // lines per request, written synchronously, cost lead intake a fifth of its throughput.
  // Flushed on close.
  const stdout = opts.logStream ? null : pino.destination({ dest: 1, sync: false });
  const app = Fastify({
    logger: loggerOptions(config, opts.logStream ?? stdout!),
    trustProxy: config.trustProxy.length ? config.trustProxy : false,
    bodyLimit: config.bodyLimitBytes,
    // Fastify's default 0 would let a client sending a byte every few seconds hold a connection
    // for ever. Node checks these on an interval (30 s by default): a tenth of the headers
    // timeout, so a bound holds within about 10% of itself.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(10, Math.floor(config.headersTimeoutMs / 10))),
    },
    exposeHeadRoutes: false,
    logController: new RequestLog(),
    return503OnClosing: false, // answered below as problem+json instead
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    // Absolute-form targets, encoded slashes and dot segments never reach a route (rule 12).
    rewriteUrl: rewriteRequestTarget,
    // Bad %-escapes and over-long path parameters fail before routing: answer problem+json too.
    frameworkErrors: frameworkErrorHandler,
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (stdout) app.addHook('onClose', async () => stdout.flushSync());
  app.server.maxConnections = config.maxConnections; // beyond it, Node closes a new connection at once
  const routeTable: RouteInfo[] = [];
  app.decorate('db', db);
  // Long reads (reports) off the event loop: on SQLite, a thread of their own (db/reader.ts).
  const reader = openReader(db, config.database, { onQuery: opts.onReaderQuery });
  app.decorate('reader', reader);
  app.addHook('onClose', () => reader.close());
  app.decorate('config', config);
  app.decorate('startedAt', Date.now());
  app.decorate('routeTable', routeTable);
  app.setValidatorCompiler(validatorCompiler);
  installErrorHandlers(app, await installSpa(app, opts.webDir));
  installSecurityHeaders(app); // first onRequest hook: every answer carries the headers
  // close() waits for every socket to end, and Node keeps a keep-alive socket open after the
  // answer to a request that was in flight when close() began (until keepAliveTimeout, 72 s):
  // a SIGTERM behind a keep-alive proxy would hang, then be forced. Tell those clients to hang up.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  app.addHook('onRequest', async () => {
    if (closing)
      throw new HttpProblem(
        503,
        'unavailable',
        'The server is shutting down; retry on another instance or in a moment.',
      );
  });
  await installRateLimit(app); // before auth: an answer over the limit costs no database query
  installRouteRules(app, routeTable);
  installAuth(app);
  await installOpenApi(app, VERSION);
  const metrics = installMetrics(app); // before the routes: its onResponse hook times them all
  installDistribution(app, { onPartnerCall: metrics.partnerCall, resumeRoute: (id) => injectionRoute(db, id) });
  const events = installEvents(app);
  installBackgroundWork(app, events, installLiveRequests(app));

  await app.register(healthRoutes, { version: VERSION });
  await app.register(metricsRoutes);
  await app.register(authRoutes);
  await app.register(permissionRoutes);
  await app.register(roleRoutes);
  await app.register(operatorRoutes);
  await app.register(apiKeyRoutes);
  await app.register(securityRoutes);
  await app.register(profileRoutes);
  await app.register(auditRoutes);
  await app.register(partnersRoutes);
  await app.register(trafficProvidersRoutes);
  await app.register(campaignsRoutes);
  await app.register(flowsRoutes);
  await app.register(leadsRoutes);
  await app.register(injectionRoutes);
  await app.register(injectionRuleRoutes);
  await app.register(importRoutes);
  await app.register(blocklistRoutes);
  await app.register(qualitySettingsRoutes);
  await app.register(reviewRoutes);
  await app.register(analyticsRoutes);
  await app.register(intakeRoutes);
  await app.register(autologinRoutes);
  await app.register(postbackRoutes);
  await app.register(licenceRoutes);
  await app.register(privacyRoutes);
  await app.register(retentionRoutes);
  await app.register(hostingRoutes);
  await app.register(webhookRoutes);
  await app.register(providerPostbackRoutes);
  await app.register(statusPullRoutes);
  await app.register(conversionRoutes);
  await app.register(providerUsersRoutes);
  await app.register(portalRoutes);
  await app.register(providerLogRoutes);
  await app.register(notificationRoutes);
  await app.register(routingRoutes);

  await app.ready();
  return app;
}

/**
 * The features' background work, wired here (the one place that knows every room): the outbox's
 * destinations, the status puller, and every job (jobs/), each on its own setting.
 */
function installBackgroundWork(app: App, { dispatcher, agent }: ReturnType<typeof installEvents>, live: LiveRequests) {
  const { config, db } = app;
  dispatcher.register('webhook', webhookDestination(db, agent, app.log));
  dispatcher.register('postback', postbackDestination(db, agent));
  const puller = new StatusPuller(db, agent, app.log);
  app.decorate('statusPull', puller);
  app.addHook('onClose', async () => puller.close());

  // The IP-to-country database (tracked links' opens; read in a worker thread, about half a second).
  app.addHook('onReady', async () => {
    loadShippedRanges().catch((err: Error) => app.log.warn({ err }, 'IP-to-country database not loaded'));
  });
  const jobs = installJobs(app);
  jobs.add(deliveryRecoveryJob(app.delivery, config.recoveryIntervalMs));
  jobs.add(eventDispatchJob(dispatcher, config.dispatchIntervalMs));
  jobs.add(eventPurgeJob(db, dispatcher, config.eventPurgeIntervalMs));
  jobs.add(statusPullsJob(puller, config.statusPullIntervalMs));
  jobs.add(providerSilenceJob(db, checkSilentProviders, config.providerSilenceIntervalMs));
  jobs.add(reviewAlertJob(db, alertWaitingReviews, config.reviewAlertIntervalMs));
  jobs.add(providerLogJob(db, { chain: chainDue, checkpointAll }, config.providerLogIntervalMs));
  const injections = new InjectionWorker({ db, delivery: app.delivery, log: app.log });
  jobs.add(injectionsJob(injections, config.injectionIntervalMs));
  jobs.add(injectionRulesJob(new RuleRunner({ db, log: app.log }), config.injectionRuleIntervalMs));
  const imports = new ImportWorker({
    db,
    log: app.log,
    quiet: live.quiet,
    createInjection: (tx, imp) =>
      createImportInjection(tx, { id: imp.id, createdBy: imp.created_by, route: JSON.parse(imp.route!) }),
  });
  jobs.add(importsJob(imports, config.importIntervalMs));
  jobs.add(retentionJob(db, (d) => runRetention(d, { quiet: live.quiet }), config.retentionIntervalMs));
  // The reports' folds (partner performance's hours, the leads report's days): each fold after
  // live requests are answered, resting as long as the last took.
  const foldReports = async (d: DB, o: { budgetMs: number; signal: AbortSignal }) => {
    const started = Date.now();
    const rest = (lastMs: number) => live.quiet(1_000, lastMs);
    const attempts = await foldDue(d, { ...o, rest });
    const days = await foldLeadDays(d, { ...o, rest, budgetMs: Math.max(0, o.budgetMs - (Date.now() - started)) });
    // After an upgrade or a restore the backlog takes a few runs: say how far it is.
    if (attempts.pending || days.pending || attempts.hours > 24 || days.days > 7)
      app.log.info({ attempts, leadDays: days }, 'reports: hours and days folded');
  };
  jobs.add(reportFoldJob(db, foldReports, config.reportFoldIntervalMs));
  // Intake's short-lived keys: Idempotency-Keys past 24 hours, velocity keys past the longest window;
  // with them (hourly, one process) the contact-view log past its retention (modules/privacy).
  const purgeIntakeKeys = async (d: DB, olderThan: string) => {
    await purgeIdempotencyKeys(d, olderThan);
    await purgeVelocityKeys(d, new Date(Date.now() - MAX_WINDOW_MINUTES * 60_000).toISOString());
    await purgeOldContactViews(d);
  };
  jobs.add(idempotencyPurgeJob(db, purgeIntakeKeys, IDEMPOTENCY_TTL_MS, config.idempotencyPurgeIntervalMs));
  const checkpointer = checkpointerOf(db);
  if (checkpointer) jobs.add(sqliteCheckpointJob(checkpointer, config.sqliteCheckpointIntervalMs));
}
