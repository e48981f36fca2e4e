import { Type } from 'typebox';
import type { App } from '../../types.js';
import { actorOf } from '../audit/service.js';
import { FLAGS } from './flags.js';
import { getQualitySettings, updateQualitySettings } from './settings-service.js';

const tags = ['Lead quality'];
const Weight = Type.Integer({
  format: 'int32',
  minimum: 0,
  maximum: 100,
  description: 'Points taken off the score (0–100)',
});
const Weights = Type.Object(
  Object.fromEntries(FLAGS.map((f) => [f, Weight])) as Record<(typeof FLAGS)[number], typeof Weight>,
  {
    additionalProperties: false,
  },
);
const FlagName = Type.Unsafe<(typeof FLAGS)[number]>({ type: 'string', enum: [...FLAGS] });

const AlertMinutes = Type.Union([Type.Integer({ format: 'int32', minimum: 1, maximum: 10_080 }), Type.Null()], {
  description:
    'Alert (review_queue.waiting, a notification) when a lead has waited in the review queue this many minutes; null: never. Default 60',
});

const QualitySettings = Type.Object(
  {
    weights: Weights,
    review_alert_minutes: AlertMinutes,
    flags: Type.Array(
      Type.Object(
        {
          name: FlagName,
          label: Type.String(),
          description: Type.String(),
          default_weight: Type.Integer({ format: 'int32' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Every flag intake computes, in a fixed order' },
    ),
  },
  { title: 'QualitySettings', additionalProperties: false },
);

const SCORE =
  "A lead's quality score is 100 less the weights of the flags it raised, at least 0, computed when it arrives " +
  'and stored with it (a change of weights scores new leads; stored scores stay).';

export default async function qualitySettingsRoutes(app: App) {
  app.get(
    '/api/quality/settings',
    {
      config: { permission: 'quality:view' },
      schema: {
        operationId: 'getQualitySettings',
        tags,
        summary: 'The fraud flags and the weight of each in the quality score',
        description: SCORE,
        response: { 200: QualitySettings },
      },
    },
    async () => getQualitySettings(app.db),
  );

  app.put(
    '/api/quality/settings',
    {
      config: { permission: 'quality:edit' },
      schema: {
        operationId: 'updateQualitySettings',
        tags,
        summary: "Set the weights of the fraud flags and the review queue's alert",
        description: `Weights left out keep theirs. ${SCORE} A role limited to some providers or partners gets 403: the weights score every lead. Audited (quality.settings_updated).`,
        body: Type.Object(
          { weights: Type.Optional(Type.Partial(Weights)), review_alert_minutes: Type.Optional(AlertMinutes) },
          { additionalProperties: false },
        ),
        response: { 200: QualitySettings },
      },
    },
    async (req) => updateQualitySettings(app.db, actorOf(req), req.body),
  );
}
