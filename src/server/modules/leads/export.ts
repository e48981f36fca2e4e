// CSV export of a lead search: streamed in keyset chunks, so memory stays flat whatever the
// number of rows, and rows inserted meanwhile neither repeat nor push others out. The server runs
// these chunks on an export worker thread with its own connection (exporter.ts, export-worker.ts),
// never on the event loop.

/** Leads per page an export reads and formats at a time. */
export const EXPORT_CHUNK = 1000;

export function exportFileName(now = new Date()): string {
  return `leads-${now.toISOString().slice(0, 19).replace(/:/g, '-')}Z.csv`;
}
