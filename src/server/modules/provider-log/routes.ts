import { problems } from '../../http/openapi.js';
import { providerPrincipalOf, type App } from '../../types.js';
import { Checkpoint, LogPage, LogQuery, PublicKey } from './schemas.js';
import { checkpointPublicKey, latestProviderCheckpoint, readProviderLog } from './service.js';

// A traffic provider's verifiable history (issue 27): its log, its latest signed checkpoint and
// the public key. Portal routes: provider principals only, and the provider is always the
// principal's (never a parameter), so no path reaches another provider's log.

const TAGS = ['Portal'];

export default async function providerLogRoutes(app: App) {
  app.get(
    '/api/portal/log',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalLog',
        tags: TAGS,
        summary: 'Your log: every fact you were shown about your leads, hash-chained',
        description:
          'Oldest first. Each entry carries the hash of the one before (prev_hash); scripts/verify-provider-log.mjs checks a saved copy against it.',
        querystring: LogQuery,
        response: { 200: LogPage, ...problems(400) },
      },
    },
    async (req) => readProviderLog(app.db, providerPrincipalOf(req).trafficProviderId, req.query),
  );

  app.get(
    '/api/portal/checkpoints/latest',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalLatestCheckpoint',
        tags: TAGS,
        summary: "Your log's head, signed (Ed25519)",
        description:
          'Signed now when the log has grown since the last checkpoint. An empty log is signed as seq 0 with 64 zeros as its hash.',
        response: { 200: Checkpoint },
      },
    },
    async (req) => latestProviderCheckpoint(app.db, providerPrincipalOf(req).trafficProviderId),
  );

  app.get(
    '/api/portal/public-key',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalPublicKey',
        tags: TAGS,
        summary: 'The key checkpoints are signed with',
        response: { 200: PublicKey },
      },
    },
    async () => checkpointPublicKey(app.db),
  );
}
