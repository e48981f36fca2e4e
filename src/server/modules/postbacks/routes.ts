import { parse as parseForm } from 'node:querystring';
import type { FastifyRequest } from 'fastify';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { PostbackBody, PostbackParams, PostbackQuery, PostbackResult } from './schemas.js';
import { actorOf } from '../audit/service.js';
import { applyPostback, parsePostback, type RawPostback } from './service.js';

const TAGS = ['Postbacks'];

const DESCRIPTION =
  "A partner reports what became of a lead it was sent: its sale status and its first deposit (FTD). The partner's postback " +
  'URL (postback_url, shown when the partner is created or its token rotated) is the credential: an unknown, malformed or ' +
  "rotated-away token gets 401. Name the lead by lead_id (the Leadgate id) or partner_lead_id (the partner's own id), not " +
  'both; it must have been delivered to this partner (else 404). A changed sale_status is stored; ftd=true records the FTD ' +
  "(ftd_at, default now; revenue in USD; and, when the campaign pays its traffic provider per FTD (cpa), the lead's cost). " +
  'Repeating a postback changes nothing (changed: false): the first FTD reported wins, and `notes` says what was ignored. ' +
  "Unknown parameters are ignored (partners' templates often add their own); empty values count as not sent. " +
  'Every postback that changes a lead is recorded in the audit log (lead.postback).';

const answers = { 200: PostbackResult, ...problems(404, 409) };

export default async function postbackRoutes(app: App) {
  // Partners' postback systems often POST HTML forms. This parser is registered inside this
  // plugin, so Fastify's encapsulation keeps it to the postback routes: the rest of the API
  // still answers 415 to a form. Repeated fields become arrays, which the schema refuses.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, parseForm(body as string));
  });

  const handle = async (req: FastifyRequest, raw: RawPostback) =>
    applyPostback(app.db, actorOf(req), req.postbackPartner!, parsePostback(raw));

  app.get(
    '/api/postback/:token',
    {
      config: { postback: true, allowlistExempt: true },
      schema: {
        operationId: 'postbackGet',
        tags: TAGS,
        summary: 'Report a conversion (query string)',
        description: DESCRIPTION,
        params: PostbackParams,
        querystring: PostbackQuery,
        response: answers,
      },
    },
    async (req) => handle(req, req.query),
  );

  app.post(
    '/api/postback/:token',
    {
      config: { postback: true, allowlistExempt: true },
      schema: {
        operationId: 'postbackPost',
        tags: TAGS,
        summary: 'Report a conversion (JSON or form body)',
        description: `${DESCRIPTION} The body is JSON or application/x-www-form-urlencoded; the query string is not read.`,
        params: PostbackParams,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: PostbackBody,
        response: answers,
      },
    },
    async (req) => handle(req, req.body),
  );
}
