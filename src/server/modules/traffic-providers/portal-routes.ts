import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { ProviderPortalSettings, PutPortalSettings } from './portal-schemas.js';
import { getProviderPortal, putProviderPortal } from './portal-service.js';

const TAGS = ['Traffic providers'];

// What a traffic provider's portal shows (issue 27): operators read and set it per provider.
export default async function providerPortalRoutes(app: App) {
  app.get(
    '/api/traffic-providers/:id/portal',
    {
      config: { permission: 'traffic_providers:view' },
      schema: {
        operationId: 'getProviderPortalSettings',
        tags: TAGS,
        summary: "What a traffic provider's portal shows",
        description:
          'The settings, and (read only) partner_words: the sale-status words partners have used on its leads, to map.',
        params: IdParams,
        response: { 200: ProviderPortalSettings, ...problems(404) },
      },
    },
    async (req) => getProviderPortal(app.db, actorOf(req), req.params.id),
  );

  app.put(
    '/api/traffic-providers/:id/portal',
    {
      config: { permission: 'traffic_providers:edit' },
      schema: {
        operationId: 'putProviderPortalSettings',
        tags: TAGS,
        summary: "Set what a traffic provider's portal shows",
        description:
          'Replaces the settings as a whole. sale_status_map keys are stored trimmed and lower case (two keys that become one: 400). ' +
          'Closing the portal (portal_enabled false) refuses its users from the next request on. An archived provider cannot be changed (409).',
        params: IdParams,
        body: PutPortalSettings,
        response: { 200: ProviderPortalSettings, ...problems(404, 409) },
      },
    },
    async (req) => putProviderPortal(app.db, actorOf(req), req.params.id, req.body),
  );
}
