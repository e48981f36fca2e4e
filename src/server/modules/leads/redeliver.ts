import { Type } from 'typebox';
import type { RouteOverride } from '../../distribution/route.js';
import { IdParams } from '../../http/common-schemas.js';
import { HttpProblem, conflict, invalid, notFound, type FieldError } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { audit } from '../audit/service.js';
import { leadDetail } from './queries.js';
import { LeadDetail } from './schemas.js';
import { canSeeContacts } from './search.js';

/** How long the claim holds the lead before the engine's own lease takes over. */
const CLAIM_MS = 30_000;

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

/** The chosen flow or partner must exist and not be archived (a paused one is the engine's call: it rejects with a reason). */
async function overrideOf(app: App, body: { flow_id?: string; partner_id?: string }): Promise<RouteOverride> {
  const errors: FieldError[] = [];
  if (body.flow_id !== undefined && body.partner_id !== undefined) {
    invalid([{ field: 'partner_id', message: 'must not be sent together with flow_id: choose a flow or a partner' }]);
  }
  if (body.flow_id !== undefined) {
    const flow = await app.db
      .selectFrom('flows')
      .select('id')
      .where('id', '=', body.flow_id)
      .where('archived_at', 'is', null)
      .executeTakeFirst();
    if (!flow) errors.push({ field: 'flow_id', message: 'names no flow (or an archived one)' });
  }
  if (body.partner_id !== undefined) {
    const partner = await app.db
      .selectFrom('partners')
      .select('id')
      .where('id', '=', body.partner_id)
      .where('archived_at', 'is', null)
      .executeTakeFirst();
    if (!partner) errors.push({ field: 'partner_id', message: 'names no partner (or an archived one)' });
  }
  if (errors.length) invalid(errors);
  return body.flow_id !== undefined
    ? { flowId: body.flow_id }
    : body.partner_id !== undefined
      ? { partnerId: body.partner_id }
      : {};
}

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
          "with the new attempts. Send {} to use the lead's own flow (without one, its campaign's). An unknown or archived flow_id or partner_id is a 400. " +
          'Email and phone are masked unless the caller holds `leads:contacts`.',
        params: IdParams,
        body: RedeliverBody,
        response: { 200: LeadDetail, ...problems(404, 409) },
      },
    },
    async (req) => {
      const id = req.params.id;
      const lead =
        (await app.db.selectFrom('leads').select(['id', 'status']).where('id', '=', id).executeTakeFirst()) ??
        notFound('lead');
      const override = await overrideOf(app, req.body);
      if (lead.status === 'duplicate')
        conflict("This lead is a duplicate by its traffic provider's policy; duplicates are not redelivered.");
      if (lead.status !== 'rejected' && lead.status !== 'failed') {
        conflict(`This lead is ${lead.status}; only rejected or failed leads can be redelivered.`);
      }

      const now = Date.now();
      await app.db.transaction().execute(async (tx) => {
        // The claim: of two redeliveries (or a redelivery and anything else that moves the
        // lead on), only one finds it still rejected or failed.
        const claimed = await tx
          .updateTable('leads')
          .set({
            status: 'pending',
            reason: null,
            lease_until: new Date(now + CLAIM_MS).toISOString(),
            status_updated_at: new Date(now).toISOString(),
          })
          .where('id', '=', id)
          .where('status', 'in', ['rejected', 'failed'])
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 0) {
          throw new HttpProblem(
            409,
            'conflict',
            'This lead was just redelivered (or otherwise moved on) by someone else.',
          );
        }
        await audit(tx, req, {
          action: 'lead.redelivered',
          target_type: 'lead',
          target_id: id,
          details: {
            from_status: lead.status,
            ...(override.flowId ? { flow_id: override.flowId } : {}),
            ...(override.partnerId ? { partner_id: override.partnerId } : {}),
          },
        });
      });

      // Outside any transaction: the engine calls partners.
      await app.delivery.run(id, override);
      return (await leadDetail(app.db, id, canSeeContacts(principalOf(req)))) ?? notFound('lead');
    },
  );
}
