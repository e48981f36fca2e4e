// Which leads a traffic provider or a flow holds for review (traffic_providers.review_rule,
// flows.review_rule): the fraud flags that hold a lead, and the lowest quality score that passes.
// Intake checks both rules on the lead it is about to store (no read of its own: the provider's
// rule comes with its token, the flow's with the campaign's route); a held lead waits, status
// `held`, for an operator to approve it (routed as if it arrived then) or reject it.
import { Type } from 'typebox';
import { FLAGS, flagNames, maskOf, type Flag } from '../../db/lead-flags.js';

export interface StoredReviewRule {
  hold_flags: Flag[];
  min_score: number | null;
}

/** Holds nothing: the columns' default (migration 20261205T000000Z_review_queue). */
export const DEFAULT_REVIEW_RULE: StoredReviewRule = { hold_flags: [], min_score: null };
const DEFAULT_JSON = JSON.stringify(DEFAULT_REVIEW_RULE);

const FlagName = Type.Unsafe<Flag>({ type: 'string', enum: [...FLAGS] });
const HOLD = `Leads raising any of these fraud flags are held for review instead of routed (${FLAGS.join(', ')})`;
const MIN_SCORE = 'Leads scoring below this are held for review; null: no score holds a lead';
const Score = Type.Integer({ format: 'int32', minimum: 0, maximum: 100 });

export const ReviewRule = Type.Object(
  {
    hold_flags: Type.Array(FlagName, { description: HOLD }),
    min_score: Type.Union([Score, Type.Null()], { description: MIN_SCORE }),
  },
  { title: 'ReviewRule', description: 'Which new leads are held for review; the default holds none' },
);

export const ReviewRuleInput = Type.Object(
  {
    hold_flags: Type.Optional(
      Type.Array(FlagName, { uniqueItems: true, maxItems: FLAGS.length, default: [], description: HOLD }),
    ),
    min_score: Type.Optional(Type.Union([Score, Type.Null()], { default: null, description: MIN_SCORE })),
  },
  {
    additionalProperties: false,
    title: 'ReviewRuleInput',
    description: `Which new leads are held for review; replaced whole. Default: ${DEFAULT_JSON} (holds none)`,
  },
);

/** The stored form: the flags in FLAGS order. */
export const storedReviewRule = (r: { hold_flags?: Flag[]; min_score?: number | null }): string =>
  JSON.stringify({ hold_flags: flagNames(maskOf(r.hold_flags ?? [])), min_score: r.min_score ?? null });

export const shownReviewRule = (json: string): StoredReviewRule => JSON.parse(json);

/**
 * Why the rule holds the lead (the operator's words), or null. `whose`: "the provider's" or
 * "the flow's", so the reason says which rule held it.
 */
export function reviewHold(
  json: string | null | undefined,
  whose: string,
  flags: number,
  score: number,
): string | null {
  if (!json || json === DEFAULT_JSON) return null; // most providers and flows: nothing to parse
  const r = JSON.parse(json) as StoredReviewRule;
  const held = maskOf(r.hold_flags) & flags;
  if (held) return `${HELD}${whose} rule holds flagged leads (${flagNames(held).join(', ')})`;
  if (r.min_score !== null && score < r.min_score)
    return `${HELD}${whose} rule holds leads scoring below ${r.min_score} (this lead: ${score})`;
  return null;
}

/** Every held lead's operator reason starts so. */
export const HELD = 'held for review: ';
/** What the provider is told about a held lead (its answer says `pending`). */
export const HELD_FOR_PROVIDER = 'the lead is held for review';
/** A lead rejected in review: the operator's reason, which the provider is told, follows. */
export const REVIEW_REJECTED = 'rejected in review: ';
