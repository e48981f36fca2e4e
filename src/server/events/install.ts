import type { App } from '../types.js';
import { createOutboundAgent } from '../distribution/outbound.js';
import { postbackDestination } from '../modules/provider-postbacks/destination.js';
import { webhookDestination } from '../modules/webhooks/destination.js';
import { EventDispatcher } from './dispatcher.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventDispatcher;
  }
}

/** app.events: dispatches the outbox every EVENT_DISPATCH_INTERVAL_MS once the app is ready; drained on close. */
export function installEvents(app: App) {
  // Its own connection pool, through the same outbound guard as partner delivery.
  const agent = createOutboundAgent({ allowedNetworks: app.config.partnerAllowedNetworks, keepAliveTimeout: 10_000, connections: 16, pipelining: 1 });
  const dispatcher = new EventDispatcher(app.db, app.log);
  dispatcher.register('webhook', webhookDestination(app.db, agent, app.log));
  dispatcher.register('postback', postbackDestination(app.db, agent));
  app.decorate('events', dispatcher);
  app.addHook('onReady', async () => dispatcher.start(app.config.dispatchIntervalMs));
  app.addHook('onClose', async () => {
    await dispatcher.close();
    await agent.close();
  });
}
