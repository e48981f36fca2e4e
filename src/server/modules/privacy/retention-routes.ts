// Scheduled retention (issue 29, item 4; retention-service.ts): the built-in admin role from a
// dashboard session only, as for erasure: what it deletes cannot be brought back.
import type { App } from '../../types.js';
import { problems } from '../../http/openapi.js';
import { actorOf } from '../audit/service.js';
import { getRetention, updateRetention } from './retention-service.js';
import { Retention, RetentionBody } from './schemas.js';

const HOW =
  'A background job (RETENTION_INTERVAL_MS, one process at a time) does the work in short transactions that yield to ' +
  "live requests. Purging contacts replaces a lead's names, email, phone and IP as an erasure does (`erased_at` set) and " +
  "keeps keyed digests (HMAC under the install's key) of its email and phone, so intake's and CSV imports' duplicate " +
  'checks still find it; every spelling of them is scrubbed from its attempts, status history, events and re-injection ' +
  'items. Deleting a lead deletes it with its attempts, status history, tracked links and their opens, re-injection items ' +
  "and events; the reports keep counting it (the hourly rollups are not reduced), and the providers' hash-chained logs keep " +
  'their entries.';

export default async function retentionRoutes(app: App) {
  app.get(
    '/api/privacy/retention',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'getRetention',
        tags: ['Privacy'],
        summary: 'How long contacts and leads are kept, and the latest runs',
        description: HOW,
        response: { 200: Retention },
      },
    },
    async () => getRetention(app.db, app.config.retentionIntervalMs),
  );

  app.put(
    '/api/privacy/retention',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'setRetention',
        tags: ['Privacy'],
        summary: 'Set how long contacts and leads are kept',
        description: `${HOW} The next run applies the new settings; what it purges or deletes cannot be brought back.`,
        body: RetentionBody,
        response: { 200: Retention, ...problems(400) },
      },
    },
    async (req) => updateRetention(app.db, actorOf(req), req.body, app.config.retentionIntervalMs),
  );
}
