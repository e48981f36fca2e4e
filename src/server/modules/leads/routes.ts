import { Type } from 'typebox';
import { HttpProblem } from '../../http/errors.js';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { decodeCursor, pageOf } from '../../http/pagination.js';
import { principalOf, type App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { recordExport, viewLead } from './service.js';
import { exportFileName } from './export.js';
import { Exporter, exporters } from './exporter.js';
import { toLead } from './view.js';
import { countLeads, findLeads, saleStatusesInUse, sortKeyOf } from './search-queries.js';
import { registerRedeliver } from './redeliver-routes.js';
import { CountQuery, ExportQuery, LeadCount, LeadDetail, LeadPage, SearchQuery, TOTAL_CAP } from './schemas.js';
import { canSeeContacts, leadFilter } from './search.js';
import { maskContactLike } from '../../privacy/mask.js';

/** How many sale statuses the picker lists at most. */
const SALE_STATUS_LIMIT = 500;

const MASKING =
  'Email and phone are masked (e.g. "j***@example.com", "+49******67") unless the caller holds `leads:contacts` ' +
  '(for an API key: among its effective permissions); so is any spelling of them (other case, URL-encoded, JSON-escaped, ' +
  'digits only, grouped) in every other text of the lead: reason, sale status, autologin URL, sub ids, and the reason and ' +
  "response excerpt of each attempt, which quote the partner's answer.";

const FILTERS =
  'Filters combine with AND; `status` and `country` take several values (repeat the parameter or separate with commas). ' +
  "Dates: `date_from`/`date_to` are days in `timezone` (default: the operator's own) or ISO 8601 instants; " +
  'rows are sorted by the `date_type` date, newest first, then by id.';

/** Seconds a client refused for too many exports at once is asked to wait. */
export const EXPORT_RETRY_AFTER_S = 10;

export default async function leadsRoutes(app: App) {
  // Exports run on worker threads with connections of their own, a bounded number at once.
  const exporter = new Exporter(app.db, app.config.database, app.config.exportConcurrency);
  exporters.set(app.db, exporter);
  app.addHook('onClose', () => exporter.close());

  app.get(
    '/api/leads/search',
    {
      config: { permission: 'leads:view' },
      schema: {
        operationId: 'searchLeads',
        tags: ['Leads'],
        summary: 'Search leads (the Leads table)',
        description:
          `${FILTERS} Pages follow a keyset cursor: leads registered while you page never repeat or shift rows between pages. ` +
          `Every row carries \`autologin_url\` (null when no partner returned one). ${MASKING}`,
        querystring: SearchQuery,
        response: { 200: LeadPage },
      },
    },
    async (req) => {
      const p = principalOf(req);
      const { limit, cursor, total: counted, ...params } = req.query;
      const filter = leadFilter(params, p);
      const after = decodeCursor(cursor, ['t', 'd', 'id']);
      // A cursor continues the ordering it came from; under another date_type or order it would skip rows.
      const order = (after as Record<string, string | undefined> | null)?.o ?? 'desc'; // cursors made before `order` existed were newest first
      if (after && (after.t !== filter.dateType || order !== filter.order)) {
        throw new HttpProblem(400, 'validation_failed', 'cursor belongs to a search with another date_type or order.', [
          { field: 'cursor', message: `was made for date_type=${after.t}, order=${order}; start again without it` },
        ]);
      }
      const rows = await findLeads(app.db, filter, after ? { d: after.d, id: after.id } : null, limit + 1);
      // A first page that holds every match is its own count; only a longer result is counted.
      const total =
        after || !counted
          ? null
          : rows.length <= limit
            ? { count: rows.length, exact: true }
            : await countLeads(app.db, filter, TOTAL_CAP);
      const page = pageOf(rows, limit, (r) => ({ t: filter.dateType, o: filter.order, ...sortKeyOf(filter, r) }));
      const contacts = canSeeContacts(p);
      return { data: page.data.map((r) => toLead(r, contacts)), next_cursor: page.next_cursor, total };
    },
  );

  app.get(
    '/api/leads/count',
    {
      config: { permission: 'leads:view' },
      schema: {
        operationId: 'countLeads',
        tags: ['Leads'],
        summary: 'Count the leads a search selects, exactly',
        description:
          `Every lead the same filters as searchLeads select, counted without searchLeads' cap of ${TOTAL_CAP.toLocaleString('en-US')} ` +
          `(the dashboard's "Count exactly"). ${FILTERS} It reads every match, so it costs more the more leads match: ask for it when the ` +
          'figure is wanted, not on every page.',
        querystring: CountQuery,
        response: { 200: LeadCount },
      },
    },
    async (req) => {
      const { count } = await countLeads(app.db, leadFilter(req.query, principalOf(req)), null);
      return { count };
    },
  );

  app.get(
    '/api/leads/export',
    {
      config: { permission: 'leads:view' },
      schema: {
        operationId: 'exportLeads',
        tags: ['Leads'],
        summary: 'Download a lead search as CSV',
        description:
          `Every lead the same filters as searchLeads select (no row limit), as one CSV file (UTF-8, RFC 4180, a header row, ` +
          `the columns of Lead in order; CRLF line ends). ${FILTERS} The file is streamed while it is read, so any size is fine. ` +
          `Text cells starting with = + - @ (or a tab or CR) get a leading single quote so spreadsheets do not run them as formulas, ` +
          `except phone-like cells (a +, then only digits, spaces, ( ) . / - and the mask's *), which can only be arithmetic and are written as they are (+49…). ${MASKING} Each export is recorded in the audit log (lead.exported, with its filters). ` +
          `Exports run beside the API, never in its way; at most EXPORT_CONCURRENCY (default 2) run at once per server instance, ` +
          `and one more is refused with 429 rate_limited and Retry-After.`,
        querystring: ExportQuery,
        response: {
          200: {
            description: 'The CSV file, sent as an attachment',
            content: {
              'text/csv': { schema: Type.String({ description: 'CSV: a header row, then one row per lead' }) },
            },
          },
          429: {
            ...problems(429)[429],
            description:
              'rate_limited: EXPORT_CONCURRENCY exports already run on this server instance (or a request rate limit is reached); retry after the Retry-After header',
          },
        },
      },
    },
    async (req, reply) => {
      const p = principalOf(req);
      const filter = leadFilter(req.query, p);
      const contacts = canSeeContacts(p);
      const opening = exporter.open(filter, contacts);
      if (!opening) {
        throw new HttpProblem(
          429,
          'rate_limited',
          `${exporter.limit} lead export${exporter.limit === 1 ? ' is' : 's are'} already running on this server; retry in ${EXPORT_RETRY_AFTER_S} s.`,
          undefined,
          { 'Retry-After': String(EXPORT_RETRY_AFTER_S) },
        );
      }
      const stream = await opening;
      try {
        await recordExport(app.db, actorOf(req), req.query, contacts);
      } catch (err) {
        stream.destroy(); // frees the worker
        throw err;
      }
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${exportFileName()}"`)
          .header('cache-control', 'no-store')
          // The schema types the body as the CSV text; a stream of that text is what goes out.
          .send(stream as unknown as string)
      );
    },
  );

  app.get(
    '/api/leads/sale-statuses',
    {
      config: { permission: 'leads:view' },
      schema: {
        operationId: 'listSaleStatuses',
        tags: ['Leads'],
        summary: 'The sale statuses partners have reported, for the Leads filter',
        description:
          `The distinct sale statuses on leads, sorted, at most ${SALE_STATUS_LIMIT} (one index seek per value). ` +
          "A partner may quote a lead's contacts in its sale status: without `leads:contacts` anything shaped like an email or a phone is masked.",
        response: {
          200: Type.Object(
            {
              data: Type.Array(Type.String()),
              complete: Type.Boolean({ description: `false when there are more than ${SALE_STATUS_LIMIT}` }),
            },
            { title: 'SaleStatuses' },
          ),
        },
      },
    },
    async (req) => {
      const rows = await saleStatusesInUse(app.db, SALE_STATUS_LIMIT + 1, principalOf(req).scope);
      const values = rows.slice(0, SALE_STATUS_LIMIT);
      const shown = canSeeContacts(principalOf(req)) ? values : [...new Set(values.map(maskContactLike))];
      return { data: shown, complete: rows.length <= SALE_STATUS_LIMIT };
    },
  );

  app.get(
    '/api/leads/:id',
    {
      config: { permission: 'leads:view' },
      schema: {
        operationId: 'getLead',
        tags: ['Leads'],
        summary: 'One lead in full, with its delivery attempts and status history',
        description: `The lead, \`attempts\` (every delivery attempt in order: partner, time, duration, HTTP status, outcome, reason, the start of the partner's answer) and \`status_history\` (every sale-status change and the FTD, with its source: postback, pull or operator). ${MASKING} A read with contacts unmasked is recorded in the contact-view log (GET /api/privacy/contact-views).`,
        params: IdParams,
        response: { 200: LeadDetail, ...problems(404) },
      },
    },
    async (req) => viewLead(app.db, actorOf(req), req.params.id),
  );

  registerRedeliver(app);
}
