// A page of lead rows written as CSV lines. The export's thread (export-worker.ts) runs on this and
// page-order.ts alone, so neither imports anything that builds queries or schemas
// (test/layout.test.ts keeps the thread small).
import { csvCell } from '../../http/csv.js';
import type { LeadRow } from './search-queries.js';
import { toLead } from './view.js';

/** The CSV lines of a page of leads (`columns` of each lead's view), masked as `contacts` says. */
export function csvLines(rows: LeadRow[], columns: readonly string[], contacts: boolean): string {
  let out = '';
  for (const r of rows) {
    const lead = toLead(r, contacts) as Record<string, unknown>;
    out += columns.map((c) => csvCell(lead[c])).join(',') + '\r\n';
  }
  return out;
}
