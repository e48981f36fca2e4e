import { Type } from 'typebox';
import { principalOf, type App } from '../../types.js';
import { reportCsv, reportFileName } from './csv.js';
import {
  PartnerPerformance,
  partnerPerformance,
  partnerPerformanceCsv,
  partnerPerformanceFileName,
  PartnerPerformanceQuery,
} from './partners.js';
import { CrgQuery, CrgReport, crgReport } from './crg.js';
import { Report, ReportQuery, Summary, SummaryQuery } from './schemas.js';
import { report, summary } from './service.js';

const RANGE_RULES =
  "The range is date_from … date_to in `timezone` (default: the operator's own), at most 366 days; " +
  'days, weeks (ISO, Monday to Sunday) and months are calendar periods of that time zone, exact across DST changes. ' +
  'Amounts are decimal numbers in `currency`; conversion_rate = ftds / delivered; flagged counts leads with any fraud flag, flagged_rate = flagged / leads.';

export default async function analyticsRoutes(app: App) {
  app.get(
    '/api/analytics/summary',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'getAnalyticsSummary',
        tags: ['Analytics'],
        summary: 'KPIs over a date range',
        description: `Leads, delivery outcomes, FTDs, conversion, flagged leads, revenue, cost and profit of the leads matching the filters. ${RANGE_RULES}`,
        querystring: SummaryQuery,
        response: { 200: Summary },
      },
    },
    async (req) => summary(app.db, req.query, principalOf(req).operator.timezone, principalOf(req).scope),
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
    async (req) => report(app.reader.db, req.query, principalOf(req).operator.timezone, principalOf(req).scope),
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
          `then detail rows only: one row per group or, with then_by, one row per inner group (carrying its group's columns too), ` +
          `no subtotal and no Total row, so a column's sum over the rows is the report's total. Columns: the grouping ` +
          `(label, then key: the day, country code or entity id) for group_by and then_by, the measures, currency. Text cells that a ` +
          `spreadsheet would run as a formula get a leading single quote. ${RANGE_RULES}`,
        querystring: ReportQuery,
        response: {
          200: {
            description: 'The CSV file, sent as an attachment',
            content: {
              'text/csv': { schema: Type.String({ description: 'CSV: a header row, then the detail rows' }) },
            },
          },
        },
      },
    },
    async (req, reply) => {
      const r = await report(app.reader.db, req.query, principalOf(req).operator.timezone, principalOf(req).scope);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${reportFileName(r)}"`)
        .header('cache-control', 'no-store')
        .send(reportCsv(r));
    },
  );

  const PARTNER_RULES =
    'Counted from delivery attempts by the time of the call (requested_at): a lead refused by one partner and taken by the next counts for both. ' +
    "The range is date_from … date_to in `timezone` (default: the operator's own), at most 366 days. Filters on provider, campaign, flow and country apply to the attempted leads.";

  app.get(
    '/api/analytics/partners',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'getPartnerPerformance',
        tags: ['Analytics'],
        summary: 'Partner performance: attempts, acceptance rate, answer time, top refusal reasons',
        description: `Per partner: finished calls, accepted, rejected, failed (timeouts, errors), acceptance_rate = accepted / attempts, the mean answer time, the most frequent refusal reasons, and the tracked autologin links handed out, opened and the open rate (null where the partner does not track them); with then_by=traffic_provider, the provider × partner grid; with then_by=origin, fresh traffic apart from re-injection jobs' calls. ${PARTNER_RULES}`,
        querystring: PartnerPerformanceQuery,
        response: { 200: PartnerPerformance },
      },
    },
    async (req) =>
      partnerPerformance(app.reader.db, req.query, principalOf(req).operator.timezone, principalOf(req).scope),
  );

  app.get(
    '/api/analytics/partners/export',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'exportPartnerPerformance',
        tags: ['Analytics'],
        summary: 'Download partner performance as CSV',
        description:
          'What getPartnerPerformance answers for the same query, as one CSV file (UTF-8, RFC 4180, CRLF line ends): a header row, one row per partner ' +
          '(its top reasons joined by "; "), with then_by its groups after it, then a Total row. Text cells that a spreadsheet would run as a formula get a leading single quote. ' +
          PARTNER_RULES,
        querystring: PartnerPerformanceQuery,
        response: {
          200: {
            description: 'The CSV file, sent as an attachment',
            content: {
              'text/csv': { schema: Type.String({ description: 'CSV: a header row, the partners, a Total row' }) },
            },
          },
        },
      },
    },
    async (req, reply) => {
      const r = await partnerPerformance(
        app.reader.db,
        req.query,
        principalOf(req).operator.timezone,
        principalOf(req).scope,
      );
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${partnerPerformanceFileName(r)}"`)
        .header('cache-control', 'no-store')
        .send(partnerPerformanceCsv(r));
    },
  );

  app.get(
    '/api/analytics/crg',
    {
      config: { permission: 'analytics:view' },
      schema: {
        operationId: 'getCrgReport',
        tags: ['Analytics'],
        summary: 'Conversion-rate guarantees: promised and actual rates, and the shortfall',
        description:
          'For each partner whose CPL deal carried a CRG when its leads were delivered, per CRG period of its deal (calendar month or ISO week in `timezone`, ' +
          'by the day each lead was delivered): leads delivered, those that made an FTD (whenever), the rate promised and reached, the FTDs missing and ' +
          'the revenue they stand for (revenue × missing / expected). A period that has not ended (the running month or week) is `running`: its ' +
          'numbers are so far and it is not short yet. The range (date_from … date_to, at most 366 days) bounds the delivery time.',
        querystring: CrgQuery,
        response: { 200: CrgReport },
      },
    },
    async (req) => crgReport(app.reader.db, req.query, principalOf(req).operator.timezone, principalOf(req).scope),
  );
}
