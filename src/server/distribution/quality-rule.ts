// A partner's quality rule (partners.quality_rule): the fraud flags it refuses and the lowest
// quality score it takes. Eligibility checks it against the lead's own row (leads.flags,
// leads.quality_score), so routing reads nothing more for it, at intake or later.
import { Type } from 'typebox';
import { FLAGS, flagNames, maskOf, type Flag } from '../db/lead-flags.js';

export interface StoredQualityRule {
  refuse_flags: Flag[];
  min_score: number | null;
}

/** Takes every lead: the column's default (migration 20261204T130000Z_partner_quality). */
export const DEFAULT_QUALITY_RULE: StoredQualityRule = { refuse_flags: [], min_score: null };
const DEFAULT_JSON = JSON.stringify(DEFAULT_QUALITY_RULE);

const FlagName = Type.Unsafe<Flag>({ type: 'string', enum: [...FLAGS] });
const REFUSE = `Leads raising any of these fraud flags are not offered to the partner (${FLAGS.join(', ')})`;
const MIN_SCORE =
  'Leads scoring below this are not offered to the partner; null: any score. A lead stored before scoring (no score) is never refused by it';
const Score = Type.Integer({ format: 'int32', minimum: 0, maximum: 100 });

export const QualityRule = Type.Object(
  {
    refuse_flags: Type.Array(FlagName, { description: REFUSE }),
    min_score: Type.Union([Score, Type.Null()], { description: MIN_SCORE }),
  },
  { title: 'QualityRule', description: 'Which leads the partner refuses; the default takes every lead' },
);

export const QualityRuleInput = Type.Object(
  {
    refuse_flags: Type.Optional(
      Type.Array(FlagName, { uniqueItems: true, maxItems: FLAGS.length, default: [], description: REFUSE }),
    ),
    min_score: Type.Optional(Type.Union([Score, Type.Null()], { default: null, description: MIN_SCORE })),
  },
  {
    additionalProperties: false,
    title: 'QualityRuleInput',
    description: `Which leads the partner refuses; replaced whole. Default: ${DEFAULT_JSON} (takes every lead)`,
  },
);

/** The stored form: the flags in FLAGS order. */
export const storedQualityRule = (r: { refuse_flags?: Flag[]; min_score?: number | null }): string =>
  JSON.stringify({ refuse_flags: flagNames(maskOf(r.refuse_flags ?? [])), min_score: r.min_score ?? null });

export const shownQualityRule = (json: string): StoredQualityRule => JSON.parse(json);

/** What eligibility checks: the refused flags as a mask, the lowest score. */
export interface QualityCheck {
  refuse: number;
  minScore: number | null;
}

const TAKES_ALL: QualityCheck = { refuse: 0, minScore: null };

export function qualityCheckOf(json: string): QualityCheck {
  if (json === DEFAULT_JSON) return TAKES_ALL; // most partners: nothing to parse
  const r = JSON.parse(json) as StoredQualityRule;
  return { refuse: maskOf(r.refuse_flags), minScore: r.min_score };
}

/** The lead traits a quality rule looks at. `score` null: stored before scoring, never refused by min_score. */
export interface LeadQuality {
  flags: number;
  score: number | null;
}

/** Why the rule refuses the lead, or null. */
export function qualityRefusal(q: QualityCheck, lead: LeadQuality): string | null {
  const refused = q.refuse & lead.flags;
  if (refused) return `refuses flagged leads (${flagNames(refused).join(', ')})`;
  if (q.minScore !== null && lead.score !== null && lead.score < q.minScore)
    return `takes quality ${q.minScore} or more (this lead: ${lead.score})`;
  return null;
}
