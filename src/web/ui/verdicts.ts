import type { paths } from '../api/schema';
import { withFlagLabels } from './flags';

type Simulation = paths['/api/routing/simulate']['post']['responses'][200]['content']['application/json'];
/** Why a partner was (or would be) offered a lead or not: the simulator's and a lead's verdicts. */
export type Verdict = Simulation['candidates'][number]['verdict'];

// Badge colours that keep their text readable (axe: colour contrast) in the light theme.
export const VERDICT: Record<Verdict, { label: string; color: string }> = {
  offer: { label: 'Would be offered', color: 'green.9' },
  not_tried: { label: 'Not tried', color: 'gray.7' },
  cap_full: { label: 'Cap full', color: 'orange.9' },
  hours: { label: 'Outside hours', color: 'gray.7' },
  country: { label: 'Country', color: 'gray.7' },
  quality: { label: 'Lead quality', color: 'grape.9' },
  paused: { label: 'Paused', color: 'gray.7' },
  archived: { label: 'Deleted', color: 'gray.7' },
  already_offered: { label: 'Already offered', color: 'gray.7' },
  not_reached: { label: 'Not reached', color: 'gray.7' },
};

/** A verdict's reason as shown: a quality refusal names its flags in their screen words. */
export const verdictReason = (verdict: Verdict, reason: string) =>
  verdict === 'quality' ? withFlagLabels(reason) : reason;
