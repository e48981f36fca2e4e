import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { CreateInjection, Injection, ListQuery, PreviewBody, PreviewResult } from './schemas.js';
import {
  createInjection,
  getInjection,
  injectionReport,
  listInjections,
  previewInjection,
  steerInjection,
} from './service.js';

const TAGS = ['Injections'];
const ACCESS = { permission: 'leads:edit' } as const;

const SCOPE =
  'A role limited to some traffic providers or partners selects only leads in its scope, sends only to its partners (partner_ids) and sees only its own jobs.';

export default async function injectionRoutes(app: App) {
  app.post(
    '/api/injections/preview',
    {
      config: ACCESS,
      schema: {
        operationId: 'previewInjection',
        tags: TAGS,
        summary: 'How many leads a re-injection job would hold',
        description: `The count of leads the selection names now (a filter that matches nothing: 0). ${SCOPE}`,
        body: PreviewBody,
        response: { 200: PreviewResult },
      },
    },
    async (req) => previewInjection(app.db, actorOf(req), req.body),
  );

  app.post(
    '/api/injections',
    {
      config: ACCESS,
      schema: {
        operationId: 'createInjection',
        tags: TAGS,
        summary: 'Re-send stored leads to a flow or to partners, at a pace, as a durable job',
        description:
          'The leads are chosen once, now (by the Leads filters or by ids), so the job holds a fixed set. The worker sends ' +
          '`per_minute` of them a minute from `start_at`, only inside `window`, each through the routing engine as a ' +
          'redelivery (caps, working hours, deals), never to a partner that was offered the lead before unless `reoffer`. ' +
          "A lead that is no longer rejected or failed when its turn comes is skipped with why. Each new attempt carries the job's id " +
          `(getLead: attempts[].injection_id). Audited (injection.created: who, the selection, how many). ${SCOPE}`,
        body: CreateInjection,
        response: { 201: Injection },
      },
    },
    async (req, reply) => reply.code(201).send(await createInjection(app.db, actorOf(req), req.body)),
  );

  app.get(
    '/api/injections',
    {
      config: ACCESS,
      schema: {
        operationId: 'listInjections',
        tags: TAGS,
        summary: 'Re-injection jobs, newest first, with their progress',
        querystring: ListQuery,
        response: { 200: Page(Injection, 'InjectionPage') },
      },
    },
    async (req) => listInjections(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/injections/:id',
    {
      config: ACCESS,
      schema: {
        operationId: 'getInjection',
        tags: TAGS,
        summary: 'One re-injection job and its progress',
        params: IdParams,
        response: { 200: Injection, ...problems(404) },
      },
    },
    async (req) => getInjection(app.db, actorOf(req), req.params.id),
  );

  for (const [step, summary, state] of [
    ['pause', 'Pause a job (a scheduled or running one); no lead is sent from the next tick on', 'paused'],
    ['resume', 'Resume a paused job', 'running (scheduled while its start_at is ahead)'],
    ['cancel', 'Cancel a job; its leads not sent yet are skipped', 'cancelled'],
  ] as const) {
    app.post(
      `/api/injections/:id/${step}`,
      {
        config: ACCESS,
        schema: {
          operationId: `${step}Injection`,
          tags: TAGS,
          summary,
          description: `Answers the job, now ${state}; 409 naming its state when the step does not apply. Audited.`,
          params: IdParams,
          response: { 200: Injection, ...problems(404, 409) },
        },
      },
      async (req) => steerInjection(app.db, actorOf(req), req.params.id, step),
    );
  }

  app.get(
    '/api/injections/:id/report.csv',
    {
      config: ACCESS,
      schema: {
        operationId: 'getInjectionReport',
        tags: TAGS,
        summary: "Download a job's per-lead report as CSV",
        description:
          'One row per lead of the job (UTF-8, RFC 4180, CRLF line ends): lead_id, state (pending, sent, delivered, refused, ' +
          'skipped), reason, partner_id, partner_name (who took it), at. No contacts: a reason quoting them is masked.',
        params: IdParams,
        response: {
          200: {
            description: 'The CSV file, sent as an attachment',
            content: {
              'text/csv': { schema: Type.String({ description: 'CSV: a header row, then one row per lead' }) },
            },
          },
          ...problems(404),
        },
      },
    },
    async (req, reply) => {
      const { fileName, csv } = await injectionReport(app.db, actorOf(req), req.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${fileName}"`)
        .header('cache-control', 'no-store')
        .send(csv);
    },
  );
}
