import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { onDemandAgent } from '../../outbound/guard.js';
import { deliveryLogRoutes } from '../delivery-log/routes.js';
import { actorOf } from '../audit/service.js';
import { PostbackList, PutPostbacks, TestPostback, TestPostbackResult } from './schemas.js';
import {
  getProviderPostbacks,
  postbackDestinationState,
  postbackPayload,
  putProviderPostbacks,
  testProviderPostback,
} from './service.js';

// A traffic provider's postbacks (S2S to its tracker): set as a whole, tried once by hand, and
// their delivery log. Under the provider's path and permissions.

const TAGS = ['Traffic providers'];

export default async function providerPostbackRoutes(app: App) {
  // The test send's own pool, through the outbound guard with the same rules as real sends.
  const testAgent = onDemandAgent(app, app.config.partnerAllowedNetworks);

  app.get(
    '/api/traffic-providers/:id/postbacks',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'getProviderPostbacks',
        tags: TAGS,
        summary: "A traffic provider's postbacks",
        params: IdParams,
        response: { 200: PostbackList, ...problems(404) },
      },
    },
    async (req) => getProviderPostbacks(app.db, req.params.id, principalOf(req).scope),
  );

  app.put(
    '/api/traffic-providers/:id/postbacks',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'putProviderPostbacks',
        tags: TAGS,
        summary: "Set a traffic provider's postbacks",
        description:
          "Replaces them all. Each lead event of the provider's leads then calls its URL (GET), at least once, in order per lead, retried for 24 hours. " +
          "A campaign's own postback replaces the provider-wide one for that event. Macros carry only what the provider may know of its own leads.",
        params: IdParams,
        body: PutPostbacks,
        response: { 200: PostbackList, ...problems(404, 409) },
      },
    },
    async (req) =>
      putProviderPostbacks(app.db, actorOf(req), req.params.id, req.body.postbacks, app.config.partnerAllowedNetworks),
  );

  app.post(
    '/api/traffic-providers/:id/postbacks/test',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'testProviderPostback',
        tags: TAGS,
        summary: 'Send a test postback',
        description:
          'Calls the postback the provider has for this event (and campaign) once, now, with the macros filled from one of its leads or a sample lead, and answers what happened. Nothing is stored.',
        params: IdParams,
        body: TestPostback,
        response: { 200: TestPostbackResult, ...problems(404, 409) },
      },
    },
    async (req) => testProviderPostback(app.db, testAgent, req.params.id, req.body, principalOf(req).scope),
  );

  deliveryLogRoutes(app, {
    kind: 'postback',
    base: '/api/traffic-providers/:id/postbacks',
    tags: TAGS,
    what: 'Provider postbacks',
    operation: 'ProviderPostback',
    view: 'traffic_providers:view',
    edit: 'traffic_providers:edit',
    retryAction: 'traffic_provider.postback_retried',
    find: (id, scope) => postbackDestinationState(app.db, id, scope),
    payload: (id, event) => postbackPayload(app.db, id, event),
  });
}
