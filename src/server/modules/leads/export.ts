// CSV export of a lead search: streamed in keyset chunks, so memory stays flat whatever the
// number of rows, and rows inserted meanwhile neither repeat nor push others out. The server runs
// these chunks on an export worker thread with its own connection (exporter.ts, export-worker.ts),
// never on the event loop; exportStream is the same walk in-process.
import { Readable } from 'node:stream';
import type { DB } from '../../db/database.js';
import { csvLines } from './page-rows.js';
import { findLeads, sortKeyOf, type LeadRow } from './search-queries.js';
import { CSV_COLUMNS } from './schemas.js';
import type { LeadFilter } from './search.js';

export const EXPORT_CHUNK = 1000;

export const csvHeader = () => CSV_COLUMNS.join(',') + '\r\n';

/** The CSV lines of a page of leads, masked as `contacts` says. */
const csvRows = (rows: LeadRow[], contacts: boolean) => csvLines(rows, CSV_COLUMNS, contacts);

/**
 * The CSV as a byte stream. The first chunk is read before the answer starts, so a failing
 * query still gets a proper error answer; later chunks are read only as the client takes them.
 */
export async function exportStream(
  db: DB,
  filter: LeadFilter,
  contacts: boolean,
  chunk = EXPORT_CHUNK,
): Promise<Readable> {
  const first = await findLeads(db, filter, null, chunk);
  async function* lines() {
    yield csvHeader();
    let rows = first;
    for (;;) {
      if (rows.length) yield csvRows(rows, contacts);
      if (rows.length < chunk) return;
      rows = await findLeads(db, filter, sortKeyOf(filter, rows[rows.length - 1]), chunk);
    }
  }
  return Readable.from(lines(), { objectMode: false, highWaterMark: 64 * 1024 });
}

export function exportFileName(now = new Date()): string {
  return `leads-${now.toISOString().slice(0, 19).replace(/:/g, '-')}Z.csv`;
}
