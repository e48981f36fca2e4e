import type { Kysely } from 'kysely';
import { readSetting, writeSetting } from '../../db/settings.js';
import { isScoped } from '../../db/scope.js';
import { HttpProblem } from '../../http/errors.js';
import type { Database } from '../../db/tables.js';
import { audit, type Actor } from '../audit/service.js';
import { DEFAULT_WEIGHTS, FLAG_INFO, FLAGS, type Weights } from './flags.js';

/** The settings key of the quality settings; intake reads it in its one read (intake/service.ts). */
export const QUALITY_SETTING = 'quality';

export interface QualitySettings {
  /** What each flag takes off a lead's quality score (0–100). */
  weights: Weights;
  /** Alert (review_queue.waiting) when a lead has been held for review this long; null: never. */
  review_alert_minutes: number | null;
}

/** The review queue's alert unless set otherwise: an hour. */
export const DEFAULT_REVIEW_ALERT_MINUTES = 60;

/** Stored settings → settings in force (flags added since take their default weight). */
export const settingsOf = (stored: Partial<QualitySettings> | null): QualitySettings => ({
  weights: { ...DEFAULT_WEIGHTS, ...(stored?.weights ?? {}) },
  review_alert_minutes:
    stored?.review_alert_minutes === undefined ? DEFAULT_REVIEW_ALERT_MINUTES : stored.review_alert_minutes,
});

export const readQualitySettings = async (db: Kysely<Database>) =>
  settingsOf(await readSetting<Partial<QualitySettings> | null>(db, QUALITY_SETTING, null));

const view = (s: QualitySettings) => ({
  ...s,
  flags: FLAGS.map((name) => ({
    name,
    label: FLAG_INFO[name].label,
    description: FLAG_INFO[name].description,
    default_weight: FLAG_INFO[name].weight,
  })),
});

export const getQualitySettings = async (db: Kysely<Database>) => view(await readQualitySettings(db));

/**
 * Replaces the weights given (the others keep theirs; new leads are scored with them, stored
 * scores stay) and the review queue's alert when given.
 */
export async function updateQualitySettings(
  db: Kysely<Database>,
  actor: Actor,
  b: { weights?: Partial<Weights>; review_alert_minutes?: number | null },
) {
  // The weights score every provider's leads: a role limited to some providers may not set them.
  if (actor.principal && isScoped(actor.principal.scope))
    throw new HttpProblem(
      403,
      'forbidden',
      'Your role is limited to some traffic providers or partners; these settings apply to every lead, so an operator whose role sees the whole account sets them.',
    );
  await db.transaction().execute(async (tx) => {
    const before = await readQualitySettings(tx);
    const after: QualitySettings = {
      weights: { ...before.weights, ...(b.weights ?? {}) },
      review_alert_minutes: b.review_alert_minutes === undefined ? before.review_alert_minutes : b.review_alert_minutes,
    };
    await writeSetting(tx, QUALITY_SETTING, after);
    await audit(tx, actor, { action: 'quality.settings_updated', details: { before, after } });
  });
  return getQualitySettings(db);
}
