import { Type } from 'typebox';
import { isPostgres } from '../../db/database.js';
import { IdParams } from '../../http/common-schemas.js';
import { conflict, invalid, notFound } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { audit } from '../audit/service.js';
import { MAX_PRICE as MAX_PAYOUT, toCents } from '../../distribution/prices.js';
import { applyConversion, CONVERSION_LEAD_COLUMNS } from './apply.js';

// An operator records what a partner said elsewhere (by phone, in its CRM): the same effect as a
// postback, with the operator as the source in the lead's status history and the audit log.

const ConversionBody = Type.Object(
  {
    sale_status: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'The sale status to set' }),
    ),
    ftd: Type.Optional(
      Type.Boolean({ description: 'true: the lead made its first deposit (recorded once: the first reported wins)' }),
    ),
    ftd_at: Type.Optional(
      Type.String({ format: 'date-time', maxLength: 40, description: 'When (default: now); with ftd=true only' }),
    ),
    revenue: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: MAX_PAYOUT,
        description: 'What the partner pays for the FTD, in USD (2 decimals at most); with ftd=true only',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1, title: 'LeadConversion' },
);

export default async function conversionRoutes(app: App) {
  app.post(
    '/api/leads/:id/conversion',
    {
      config: { permission: 'leads:edit' },
      schema: {
        operationId: 'setLeadConversion',
        tags: ['Leads'],
        summary: 'Record a sale status or FTD by hand',
        description:
          'For a delivered lead: what a postback would do, with the operator as the source (status history, audit log). 409 for a lead that is not delivered.',
        params: IdParams,
        body: ConversionBody,
        response: {
          200: Type.Object(
            { changed: Type.Boolean(), notes: Type.Array(Type.String()) },
            { title: 'LeadConversionResult' },
          ),
          ...problems(404, 409),
        },
      },
    },
    async (req) => {
      const b = req.body;
      const revenue_cents =
        b.revenue === undefined
          ? undefined
          : (toCents(b.revenue) ?? invalid([{ field: 'revenue', message: 'must have at most 2 decimals (cents)' }]));
      if (b.ftd_at !== undefined && Date.parse(b.ftd_at) > Date.now() + 5 * 60_000)
        invalid([{ field: 'ftd_at', message: 'is more than 5 minutes in the future' }]);
      return app.db.transaction().execute(async (tx) => {
        let q = tx
          .selectFrom('leads')
          .select([...CONVERSION_LEAD_COLUMNS, 'status'])
          .where('id', '=', req.params.id);
        if (isPostgres(tx)) q = q.forUpdate();
        const lead = (await q.executeTakeFirst()) ?? notFound('lead');
        if (lead.status !== 'delivered')
          conflict(`This lead is ${lead.status}, not delivered: only a delivered lead converts.`);
        const ftd_at = b.ftd_at === undefined ? undefined : new Date(b.ftd_at).toISOString();
        const applied = await applyConversion(
          tx,
          lead,
          { sale_status: b.sale_status?.trim(), ftd: b.ftd, ftd_at, revenue_cents },
          'operator',
        );
        if (applied.changed)
          await audit(tx, req, {
            action: 'lead.conversion_set',
            target_type: 'lead',
            target_id: lead.id,
            details: { changes: applied.changes },
          });
        return { changed: applied.changed, notes: applied.notes };
      });
    },
  );
}
