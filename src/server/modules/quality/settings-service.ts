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
}

/** Stored settings → settings in force (flags added since take their default weight). */
export const settingsOf = (stored: Partial<QualitySettings> | null): QualitySettings => ({
  weights: { ...DEFAULT_WEIGHTS, ...(stored?.weights ?? {}) },
});

const view = (s: QualitySettings) => ({
  ...s,
  flags: FLAGS.map((name) => ({
    name,
    label: FLAG_INFO[name].label,
    description: FLAG_INFO[name].description,
    default_weight: FLAG_INFO[name].weight,
  })),
});

export const getQualitySettings = async (db: Kysely<Database>) =>
  view(settingsOf(await readSetting<Partial<QualitySettings> | null>(db, QUALITY_SETTING, null)));

/** Replaces the weights given (the others keep theirs); new leads are scored with them, stored scores stay. */
export async function updateQualitySettings(db: Kysely<Database>, actor: Actor, b: { weights?: Partial<Weights> }) {
  // The weights score every provider's leads: a role limited to some providers may not set them.
  if (actor.principal && isScoped(actor.principal.scope))
    throw new HttpProblem(
      403,
      'forbidden',
      'Your role is limited to some traffic providers or partners; the weights score every lead, so an operator whose role sees the whole account sets them.',
    );
  await db.transaction().execute(async (tx) => {
    const before = settingsOf(await readSetting<Partial<QualitySettings> | null>(tx, QUALITY_SETTING, null));
    const after: QualitySettings = { weights: { ...before.weights, ...(b.weights ?? {}) } };
    await writeSetting(tx, QUALITY_SETTING, after);
    await audit(tx, actor, { action: 'quality.settings_updated', details: { before, after } });
  });
  return getQualitySettings(db);
}
