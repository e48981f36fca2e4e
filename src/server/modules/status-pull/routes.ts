import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { PullRun, StatusPull, StatusPullInput } from './schemas.js';
import { deleteStatusPull, getStatusPull, putStatusPull, runStatusPull } from './service.js';

const TAGS = ['Partners'];

export default async function statusPullRoutes(app: App) {
  app.get(
    '/api/partners/:id/status-pull',
    {
      config: { permission: 'partners:view' },
      schema: {
        operationId: 'getStatusPull',
        tags: TAGS,
        summary: "A partner's status pull and its health",
        description:
          '`null` when the partner has no status pull (a partner without one is not an error for a screen); 404 when ' +
          'there is no such partner.',
        params: IdParams,
        response: {
          200: Type.Union([StatusPull, Type.Null({ description: 'The partner has no status pull' })]),
          ...problems(404),
        },
      },
    },
    async (req) => getStatusPull(app.db, req.params.id, principalOf(req).scope),
  );

  app.put(
    '/api/partners/:id/status-pull',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'putStatusPull',
        tags: TAGS,
        summary: "Set a partner's status pull",
        description:
          "Asks the partner's API for its leads' statuses every interval_minutes over the last lookback_hours, and applies them as a postback would: " +
          'the sale status when it differs, the FTD once per lead (the first reported wins), the source recorded as pull. ' +
          'It runs on schedule only with enabled: true, which needs a dry run of the same settings first (interval_minutes aside): ' +
          'save it disabled, POST …/run with dry_run: true, then enable it. Once enabled, the first run is due at once.',
        params: IdParams,
        body: StatusPullInput,
        response: { 200: StatusPull, ...problems(404, 409) },
      },
    },
    async (req) => putStatusPull(app.db, actorOf(req), req.params.id, req.body, app.config.partnerAllowedNetworks),
  );

  app.delete(
    '/api/partners/:id/status-pull',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'deleteStatusPull',
        tags: TAGS,
        summary: "Remove a partner's status pull",
        params: IdParams,
        response: { 204: Type.Null(), ...problems(404) },
      },
    },
    async (req, reply) => {
      await deleteStatusPull(app.db, actorOf(req), req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/partners/:id/status-pull/run',
    {
      config: { permission: 'partners:edit' },
      schema: {
        operationId: 'runStatusPull',
        tags: TAGS,
        summary: 'Pull now',
        description:
          'Runs the pull at once. dry_run (the default) calls the partner and shows the requests, their answers and what would change, changing nothing; ' +
          'dry_run=false applies the changes and counts as the scheduled run; it needs a dry run of the stored settings first ' +
          '(or the pull already running on schedule with them), else 409: a live pull changes leads and the first FTD reported wins. ' +
          "The partner's text (answer excerpts, status words) shows emails and phone numbers masked unless the caller holds `leads:contacts`.",
        params: IdParams,
        body: Type.Object({ dry_run: Type.Boolean({ default: true }) }, { additionalProperties: false }),
        response: { 200: PullRun, ...problems(404, 409) },
      },
    },
    async (req) => runStatusPull(app.db, actorOf(req), app.statusPull.agent, req.log, req.params.id, req.body.dry_run),
  );
}
