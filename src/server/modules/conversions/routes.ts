import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { MAX_PRICE as MAX_PAYOUT } from '../../distribution/prices.js';
import { setLeadConversion } from './service.js';

// Recording a sale status or FTD by hand (service.ts).

const ConversionBody = Type.Object(
  {
    sale_status: Type.Optional(
      Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'The sale status to set' }),
    ),
    ftd: Type.Optional(
      Type.Boolean({
        description:
          'true: the lead made its first deposit (recorded once: the first reported wins); false: the FTD recorded is reversed (a chargeback: ftd_at cleared, its CPA payout and revenue taken back; the traffic provider’s log gets a new ftd_reversed entry)',
      }),
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
    async (req) => setLeadConversion(app.db, actorOf(req), req.params.id, req.body),
  );
}
