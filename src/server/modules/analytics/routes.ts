import { principalOf, type App } from '../../types.js';
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
}
