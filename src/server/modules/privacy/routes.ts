// Privacy (issue 29, item 4): erasure by email or phone, and the log of who viewed contacts.
// Both are for the built-in admin role from a dashboard session only: an erasure cannot be undone,
// and the log tells who read whose contacts (a key, even an admin's, gets 403 session_required).
import type { App } from '../../types.js';
import { problems } from '../../http/openapi.js';
import { actorOf } from '../audit/service.js';
import { eraseContact, listContactViews, listErasures, CONTACT_VIEW_RETENTION_DAYS } from './service.js';
import { ContactViewList, ContactViewQuery, ErasureBody, ErasureDone, ErasureList, ErasureQuery } from './schemas.js';

export default async function privacyRoutes(app: App) {
  app.post(
    '/api/privacy/erasures',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'eraseContact',
        tags: ['Privacy'],
        summary: 'Erase every lead and trace of an email or a phone',
        description:
          'Every lead carrying the email or the phone (email normalized as the blocklists do; phone in E.164) keeps its row ' +
          '(statuses, dates, money) with its names, email, phone and IP replaced ("[erased]" as first name, the rest empty) and ' +
          '`erased_at` set. Every spelling of the contacts (and of those leads\' own email and phone) is replaced by "[erased]" ' +
          "in the leads' attempts (reason, partner's answer), status history, the events outbox and its delivery records, the " +
          'audit log (e.g. an export searched by that email), CSV imports (the whole row blanked; its bad-row records deleted), ' +
          're-injection jobs and rules, blocklist notes; rows keyed by the contacts are deleted (blocklist entries of these ' +
          'values, login failures, velocity and duplicate keys, idempotency records). All in one transaction, with the receipt ' +
          'and the audit record (the subject masked). On SQLite deleted content is zeroed (secure_delete) and the write-ahead ' +
          'log is checkpointed and truncated afterwards. With `blocklist: true` each contact asked for is also listed globally ' +
          'without being stored: the entry reads "erased subject" and keeps only the HMAC digest intake compares. Cannot be undone.',
        body: ErasureBody,
        response: { 201: ErasureDone, ...problems(400) },
      },
    },
    async (req, reply) => reply.code(201).send(await eraseContact(app.db, actorOf(req), req.body)),
  );

  app.get(
    '/api/privacy/erasures',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'listErasures',
        tags: ['Privacy'],
        summary: 'Erasure receipts, newest first',
        querystring: ErasureQuery,
        response: { 200: ErasureList, ...problems(400) },
      },
    },
    async (req) => listErasures(app.db, req.query),
  );

  app.get(
    '/api/privacy/contact-views',
    {
      config: { sessionOnly: true, adminOnly: true },
      schema: {
        operationId: 'listContactViews',
        tags: ['Privacy'],
        summary: 'Who read contacts unmasked, newest first',
        description:
          "One row per read with `leads:contacts` of a lead's detail (GET /api/leads/{id}, or a redelivery's answer) and per " +
          'export with contacts (GET /api/leads/export, its filters masked): the operator, session or API key, the address. ' +
          `Kept ${CONTACT_VIEW_RETENTION_DAYS} days.`,
        querystring: ContactViewQuery,
        response: { 200: ContactViewList, ...problems(400) },
      },
    },
    async (req) => listContactViews(app.db, req.query),
  );
}
