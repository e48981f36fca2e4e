import { invalid } from '../../http/errors.js';
import { problems } from '../../http/openapi.js';
import { principalOf, type App } from '../../types.js';
import { CapUsage, SimulateBody, SimulationResult } from './schemas.js';
import { simulate } from './simulate.js';
import { capUsage } from './usage.js';

const tags = ['Routing'];

export default async function routingRoutes(app: App) {
  app.post(
    '/api/routing/simulate',
    {
      // A POST, so an edit permission (view scopes never allow a write method), though it stores nothing.
      config: { permission: 'flows:edit' },
      schema: {
        operationId: 'simulateRouting',
        tags,
        summary: 'Where would this lead go?',
        description:
          'Routes a lead that is not stored, from `country` (with the fraud `flags` and `quality_score` it would have, for partners’ quality rules), through a campaign (with its own checks: paused, countries, flow) or a flow, ' +
          'at `at` (default: now): the flow’s candidates in order, each with its verdict and reason, with the same checks and cap counts real ' +
          'routing uses. Nothing is stored, no partner is called, no cap is reserved. Send exactly one of campaign_id and flow_id. ' +
          'Needs flows:edit, as every POST needs an edit permission; flows:view is enough for the cap usage and for a lead’s own verdicts.',
        body: SimulateBody,
        response: { 200: SimulationResult, ...problems(404) },
      },
    },
    async (req) => {
      const b = req.body;
      if ((b.campaign_id === undefined) === (b.flow_id === undefined)) {
        invalid([
          {
            field: b.campaign_id === undefined ? 'campaign_id' : 'flow_id',
            message: 'send exactly one of campaign_id and flow_id',
          },
        ]);
      }
      return simulate(app.db, {
        country: b.country,
        flags: b.flags ?? [],
        quality_score: b.quality_score ?? null,
        campaign_id: b.campaign_id,
        flow_id: b.flow_id,
        at: b.at === undefined ? Date.now() : Date.parse(b.at),
      });
    },
  );

  app.get(
    '/api/routing/cap-usage',
    {
      config: { permission: 'flows:view' },
      schema: {
        operationId: 'getCapUsage',
        tags,
        summary: 'Caps in use now',
        description:
          'For each partner with caps of its own, each flow target with caps, and each country with a cap of its own on a target: used / cap ' +
          'today, this hour and in all, in the partner’s local day and hour (its working hours’ time zone, else UTC). Deliveries in progress ' +
          'count as used. Archived partners and flows are left out.',
        response: { 200: CapUsage },
      },
    },
    async (req) => capUsage(app.db, Date.now(), principalOf(req).scope),
  );
}
