// The fraud flags intake raises on a lead, as the dashboard names them. Their labels come from
// GET /api/quality/settings for a role holding quality:view; a role without it is never sent
// there (it would answer 403) and reads the same labels from the map below, kept in step with
// the server's (a flag the schema adds fails type-checking here until it has one).
// Only ui/flags.ts at run time here (the Leads filters' unit test reads this file); the hook: useFlagInfo.ts.
import type { paths } from '../../api/schema';
import { FLAG_INFO } from '../../ui/flags';

export type QualitySettings = paths['/api/quality/settings']['get']['responses'][200]['content']['application/json'];
export type Flag = QualitySettings['flags'][number]['name'];
export interface FlagInfo {
  label: string;
  description: string;
}

/** The labels when the settings cannot be read, in the server's order (the one map: ui/flags.ts). */
export const FLAG_FALLBACK: Record<Flag, FlagInfo> = FLAG_INFO;

export const FLAG_NAMES = Object.keys(FLAG_FALLBACK) as Flag[];
export const isFlag = (name: string): name is Flag => Object.hasOwn(FLAG_FALLBACK, name);

/** A score's colour: green from 80, yellow from 50, red below; grey when not scored. */
export const scoreColor = (score: number | null) =>
  score === null ? 'gray' : score >= 80 ? 'green' : score >= 50 ? 'yellow' : 'red';

/** "70", or "not scored" for a lead stored before scoring existed. */
export const scoreText = (score: number | null) => (score === null ? 'not scored' : String(score));
