// The queries the benchmark times (bench/run.ts): the Leads table's searches and the report
// screens' requests, as data in bench/queries/. The twenty recorded in bench/RESULTS.md come
// first, in their order, so their numbers there (S1–S12, A13–A20) stay theirs.
import { RECORDED_REPORTS, REPORTS } from './queries/reports.js';
import { RECORDED_SEARCHES, SEARCHES } from './queries/search.js';
import type { Query } from './queries/common.js';

export { DEEP_PAGES, type Fixture, type Query } from './queries/common.js';

export const QUERIES: Query[] = [...RECORDED_SEARCHES, ...RECORDED_REPORTS, ...SEARCHES, ...REPORTS];

const names = new Set(QUERIES.map((q) => q.name));
if (names.size !== QUERIES.length) throw new Error('bench/queries: two queries have the same name');
