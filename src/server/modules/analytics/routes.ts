import { Type } from 'typebox';
import { principalOf, type App } from '../../types.js';
import { reportCsv, reportFileName } from './csv.js';
import { Report, ReportQuery, Summary, SummaryQuery } from './schemas.js';
import { report, summary } from './service.js';

const RANGE_RULES =
  'The range is date_from … date_to in `timezone` (default: the operator\'s own), at most 366 days; ' +
  'days, weeks (ISO, Monday to Sunday) and months are calendar periods of that time zone, exact across DST changes. ' +
  'Amounts are decimal numbers in `currency`; conversion_rate = ftds / delivered.';

export default async function analyticsRoutes(app: App) {
  app.get(
    '/api/analytics/summary',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'getAnalyticsSummary',
        tags: ['Analytics'],
        summary: 'KPIs over a date range',
        description: `Leads, delivery outcomes, FTDs, conversion, revenue, cost and profit of the leads matching the filters. ${RANGE_RULES}`,
        querystring: SummaryQuery,
        response: { 200: Summary },
      },
    },
    async (req) => summary(app.db, req.query, principalOf(req).operator.timezone),
  );

  app.get(
    '/api/analytics/report',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'getAnalyticsReport',
        tags: ['Analytics'],
        summary: 'The same measures grouped by period or entity, one or two levels',
        description: `Groups by group_by, and inside each group by then_by when given. ${RANGE_RULES}`,
        querystring: ReportQuery,
        response: { 200: Report },
      },
    },
    async (req) => report(app.db, req.query, principalOf(req).operator.timezone),
  );

  app.get(
    '/api/analytics/report/export',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'exportAnalyticsReport',
        tags: ['Analytics'],
        summary: 'Download a report as CSV',
        description:
          `The report getAnalyticsReport answers for the same query, as one CSV file (UTF-8, RFC 4180, CRLF line ends): a header row, ` +
          `then one row per group and, with then_by, one row per inner group after its group, then a Total row. Columns: the grouping ` +
          `(label, then key: the day, country code or entity id) for group_by and then_by, the measures, currency. Text cells that a ` +
          `spreadsheet would run as a formula get a leading single quote. ${RANGE_RULES}`,
        querystring: ReportQuery,
        response: {
          200: {
            description: 'The CSV file, sent as an attachment',
            content: { 'text/csv': { schema: Type.String({ description: 'CSV: a header row, the groups, a Total row' }) } },
          },
        },
      },
    },
    async (req, reply) => {
      const r = await report(app.db, req.query, principalOf(req).operator.timezone);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${reportFileName(r)}"`)
        .header('cache-control', 'no-store')
        .send(reportCsv(r));
    },
  );
}
