import type { App } from '../types.js';
import { createOutboundAgent } from '../outbound/guard.js';
import { postbackDestination } from '../modules/provider-postbacks/destination.js';
import { webhookDestination } from '../modules/webhooks/destination.js';
import { StatusPuller } from '../modules/status-pull/runner.js';
import { checkSilentProviders } from '../modules/traffic-providers/silence.js';
import { EventDispatcher } from './dispatcher.js';

const SILENCE_CHECK_MS = 5 * 60_000;

declare module 'fastify' {
  interface FastifyInstance {
    events: EventDispatcher;
    statusPull: StatusPuller;
  }
}

/**
 * app.events: dispatches the outbox every EVENT_DISPATCH_INTERVAL_MS once the app is ready;
 * app.statusPull: runs partners' status pulls when due. Both drained on close.
 */
export function installEvents(app: App) {
  // Its own connection pool, through the same outbound guard as partner delivery.
  const agent = createOutboundAgent({
    allowedNetworks: app.config.partnerAllowedNetworks,
    keepAliveTimeout: 10_000,
    connections: 16,
    pipelining: 1,
  });
  const dispatcher = new EventDispatcher(app.db, app.log);
  dispatcher.register('webhook', webhookDestination(app.db, agent, app.log));
  dispatcher.register('postback', postbackDestination(app.db, agent));
  app.decorate('events', dispatcher);
  // Partners' status pulls share the pool; they run on schedule when dispatch does.
  const puller = new StatusPuller(app.db, agent, app.log);
  app.decorate('statusPull', puller);
  // Traffic providers gone quiet: checked every few minutes.
  let silence: NodeJS.Timeout | null = null;
  app.addHook('onReady', async () => {
    dispatcher.start(app.config.dispatchIntervalMs);
    puller.start(app.config.dispatchIntervalMs > 0);
    if (app.config.dispatchIntervalMs > 0) {
      silence = setInterval(
        () =>
          void checkSilentProviders(app.db).catch((err) =>
            app.log.error({ err }, 'checking silent traffic providers failed'),
          ),
        SILENCE_CHECK_MS,
      );
      silence.unref();
    }
  });
  app.addHook('onClose', async () => {
    if (silence) clearInterval(silence);
    await Promise.all([dispatcher.close(), puller.close()]);
    await agent.close();
  });
}
