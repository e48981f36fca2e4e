import { Type } from 'typebox';
import { IdParams } from '../../http/common-schemas.js';
import { problems } from '../../http/openapi.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { LeadDetail } from './schemas.js';
import { redeliverLead } from './service.js';

const Ref = (what: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: `${what} (id), not archived` }));

const RedeliverBody = Type.Object(
  {
    flow_id: Ref('Route the lead through this flow instead of its own'),
    partner_id: Ref('Offer the lead to this one partner only (one attempt)'),
  },
  {
    additionalProperties: false,
    description: "At most one of flow_id and partner_id; neither: the lead's own flow, else its campaign's",
  },
);

/** POST /api/leads/{id}/redeliver, registered by the leads module. */
export function registerRedeliver(app: App) {
  app.post(
    '/api/leads/:id/redeliver',
    {
      config: { permission: 'leads:edit' },
      schema: {
        operationId: 'redeliverLead',
        tags: ['Leads'],
        summary: 'Send a rejected or failed lead through a flow or to a partner again',
        description:
          'Only a `rejected` or `failed` lead can be redelivered (else 409 naming its status; duplicates never: they are ' +
          "duplicates by the traffic provider's policy). The lead is claimed atomically (two redeliveries of one lead: one " +
          'wins, the other gets 409), recorded in the audit log (lead.redelivered), delivered like a new lead (waterfall, caps, ' +
          'working hours; with partner_id, that partner alone, one attempt), and answered in full as getLead answers it, ' +
          "with the new attempts. Send {} to use the lead's own flow (without one, its campaign's). An unknown or archived flow_id or partner_id is a 400, and so is a partner_id whose partner does not take the lead's country. " +
          'Email and phone are masked unless the caller holds `leads:contacts`.',
        params: IdParams,
        body: RedeliverBody,
        response: { 200: LeadDetail, ...problems(404, 409) },
      },
    },
    async (req) => redeliverLead(app.db, app.delivery, actorOf(req), req.params.id, req.body),
  );
}
