import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import { Page } from '../../http/pagination.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { exportPortalLeads, portalLead, searchPortalLeads } from './leads.js';
import {
  PortalLead,
  PortalLeadExportQuery,
  PortalLeadSearchQuery,
  PortalStats,
  PortalStatsQuery,
} from './leads-schemas.js';
import { portalStats, statsCsv, statsFileName } from './stats.js';

const TAGS = ['Portal'];
const SHOWN =
  'Your own leads only. FTDs (their date, the converted sale status and a payout per FTD) show once the hold your account ' +
  'manager set has passed (`shows.ftd_hold_hours` in portalMe); the sale status, the payout and your contacts (masked) only ' +
  'where shown. Days are days in your time zone (PATCH /api/portal/me).';
const Csv = (description: string) => ({
  200: {
    description: 'The CSV file, sent as an attachment',
    content: { 'text/csv': { schema: Type.String({ description }) } },
  },
});

// The traffic provider's data (issue 27): its leads and its statistics, read only.
export default async function portalLeadRoutes(app: App) {
  app.get(
    '/api/portal/leads',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'searchPortalLeads',
        tags: TAGS,
        summary: 'Your leads, newest first',
        description: SHOWN,
        querystring: PortalLeadSearchQuery,
        response: { 200: Page(PortalLead, 'PortalLeadPage') },
      },
    },
    async (req) => searchPortalLeads(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/portal/leads/export.csv',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'exportPortalLeads',
        tags: TAGS,
        summary: 'Your leads as CSV (the same filters as the search)',
        description: `${SHOWN} One CSV file (UTF-8, RFC 4180, CRLF): a header row, then one row per lead, newest first.`,
        querystring: PortalLeadExportQuery,
        response: Csv('CSV: a header row, then the leads'),
      },
    },
    async (req, reply) => {
      const { stream, fileName } = await exportPortalLeads(app.db, actorOf(req), req.query);
      return (
        reply
          .type('text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${fileName}"`)
          .header('cache-control', 'no-store')
          // The schema types the body as the CSV text; a stream of that text is what goes out.
          .send(stream as unknown as string)
      );
    },
  );

  app.get(
    '/api/portal/leads/:id',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalLead',
        tags: TAGS,
        summary: 'One of your leads',
        description: SHOWN,
        params: IdParams,
        response: { 200: PortalLead, ...problems(404) },
      },
    },
    async (req) => portalLead(app.db, actorOf(req), req.params.id),
  );

  app.get(
    '/api/portal/stats',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'getPortalStats',
        tags: TAGS,
        summary: 'Your statistics by day, week, month, campaign, country or sub id',
        description:
          'Leads counted by the day they arrived (in your time zone); accepted: delivered; ftds: confirmed FTDs of those leads ' +
          '(after the hold); conversion_rate: ftds / leads; payout_cents when shown. Time groupings list every period of the range.',
        querystring: PortalStatsQuery,
        response: { 200: PortalStats },
      },
    },
    async (req) => portalStats(app.db, actorOf(req), req.query),
  );

  app.get(
    '/api/portal/stats/export.csv',
    {
      config: { portal: 'portal:view' },
      schema: {
        operationId: 'exportPortalStats',
        tags: TAGS,
        summary: 'Your statistics as CSV',
        description:
          'getPortalStats for the same query as one CSV file: a header row (the grouping: label then key; the measures; currency), ' +
          'then one row per group; no Total row, so a column sum is the total.',
        querystring: PortalStatsQuery,
        response: Csv('CSV: a header row, then one row per group'),
      },
    },
    async (req, reply) => {
      const s = await portalStats(app.db, actorOf(req), req.query);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${statsFileName(s)}"`)
        .header('cache-control', 'no-store')
        .send(statsCsv(s));
    },
  );
}
