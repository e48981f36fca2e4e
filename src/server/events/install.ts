import type { Agent } from 'undici';
import type { App } from '../types.js';
import { createOutboundAgent } from '../outbound/guard.js';
import { EventDispatcher } from './dispatcher.js';

declare module 'fastify' {
  interface FastifyInstance {
    events: EventDispatcher;
  }
}

/**
 * app.events, the outbox dispatcher, with its own outbound pool (through the same guard as partner
 * delivery), which the features that send (webhooks, provider postbacks, status pulls) share.
 * Features register their destinations on app.events in app.ts; the event-dispatch job runs it.
 */
export function installEvents(app: App): { dispatcher: EventDispatcher; agent: Agent } {
  const agent = createOutboundAgent({
    allowedNetworks: app.config.partnerAllowedNetworks,
    keepAliveTimeout: 10_000,
    connections: 16,
    pipelining: 1,
  });
  const dispatcher = new EventDispatcher(app.db, app.log);
  app.decorate('events', dispatcher);
  // The jobs are drained in preClose; the pool closes after them.
  app.addHook('onClose', async () => {
    await dispatcher.close();
    await agent.close();
  });
  return { dispatcher, agent };
}
