import { Type } from 'typebox';
import { Timestamp } from '../../http/common-schemas.js';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { MAX_REVIEW_IDS, approveHeld, rejectHeldLeads, reviewQueue } from './review-service.js';

// The review queue (issue 29, item 3) under /api/leads/review: held leads are leads, so reading
// the queue takes leads:view and deciding it leads:edit. The held leads themselves are listed by
// searchLeads with status=held (their flags, scores and reasons in each row).

const tags = ['Leads'];
const HOLD =
  "A traffic provider's or a flow's review rule (its `review`: fraud flags, lowest score) makes intake store a new lead " +
  '`held` instead of routing it; the provider is answered `pending` with the reason "the lead is held for review".';

const Ids = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: MAX_REVIEW_IDS,
  uniqueItems: true,
  description: `The held leads to decide (up to ${MAX_REVIEW_IDS}); list them with searchLeads status=held`,
});

const Outcome = Type.Object(
  {
    done: Type.Array(Type.String(), { description: 'The leads this call approved or rejected' }),
    skipped: Type.Array(
      Type.Object({ id: Type.String(), reason: Type.String({ description: 'Why it was left as it is' }) }),
      {
        description:
          'Ids left as they are: no lead you may read, a lead no longer held (decided before, or just now by someone else)',
      },
    ),
  },
  { title: 'ReviewOutcome' },
);

const Queue = Type.Object(
  {
    held: Type.Integer({ format: 'int32', description: 'Leads held for review that you may read' }),
    oldest_held_at: Type.Union([{ ...Timestamp, maxLength: 40 }, Type.Null()], {
      description: 'When the oldest of them arrived; null: none held',
    }),
    alert_after_minutes: Type.Union([Type.Integer({ format: 'int32' }), Type.Null()], {
      description:
        'review_queue.waiting is raised when a lead has waited this long (quality settings review_alert_minutes); null: never',
    }),
    providers: Type.Array(
      Type.Object({
        traffic_provider_id: Type.String(),
        traffic_provider_name: Type.String(),
        held: Type.Integer({ format: 'int32' }),
        oldest_held_at: { ...Timestamp, maxLength: 40 },
      }),
      { description: 'Per traffic provider, the one waiting longest first' },
    ),
  },
  { title: 'ReviewQueue' },
);

export default async function reviewRoutes(app: App) {
  app.get(
    '/api/leads/review',
    {
      config: { permission: 'leads:view' },
      schema: {
        operationId: 'getReviewQueue',
        tags,
        summary: 'The review queue: how many leads are held, per traffic provider, and since when',
        description: `${HOLD} A role limited to some providers or partners counts only the held leads it may read.`,
        response: { 200: Queue },
      },
    },
    async (req) => reviewQueue(app.db, actorOf(req)),
  );

  app.post(
    '/api/leads/review/approve',
    {
      config: { permission: 'leads:edit' },
      schema: {
        operationId: 'approveHeldLeads',
        tags,
        summary: 'Approve held leads: route each as if it arrived now',
        description:
          `${HOLD} Approved leads become \`pending\` and are routed through their flow with the caps and working hours of now ` +
          '(each by one server process, within seconds); their provider learns the outcome as usual. Only leads still held move ' +
          '(of two reviewers deciding one lead, one wins; the other sees it in `skipped`). Audited (lead.review_approved).',
        body: Type.Object({ lead_ids: Ids }, { additionalProperties: false }),
        response: { 200: Outcome },
      },
    },
    async (req) => approveHeld(app.db, () => app.delivery.sweepSoon(), actorOf(req), req.body.lead_ids),
  );

  app.post(
    '/api/leads/review/reject',
    {
      config: { permission: 'leads:edit' },
      schema: {
        operationId: 'rejectHeldLeads',
        tags,
        summary: 'Reject held leads with a reason their traffic provider is told',
        description:
          `${HOLD} Rejected leads become \`rejected\`; the reason is shown to their provider as written (its intake answer, ` +
          'its portal and log; its lead.rejected postbacks are sent), so write it for them. Only leads still held move. ' +
          'Audited (lead.review_rejected).',
        body: Type.Object(
          {
            lead_ids: Ids,
            reason: Type.String({
              minLength: 1,
              maxLength: 200,
              pattern: '\\S',
              description: 'Shown to the traffic provider as it is, e.g. "fake phone number"',
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: Outcome },
      },
    },
    async (req) => rejectHeldLeads(app.db, actorOf(req), req.body.lead_ids, req.body.reason),
  );
}
