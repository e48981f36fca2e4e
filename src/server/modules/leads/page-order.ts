// A page's rows put back in page order: the Leads table's page (search-queries.ts) and the
// export's thread (export-worker.ts), which must not load the search's modules, both use it.

/**
 * The rows of a page's statement in page order: by `column` (a date), then id, both in `order`.
 * The statement's outer select (the names joined onto the limited rows) may return them in any order.
 */
export function inPageOrder<R extends object>(rows: R[], column: string, order: 'asc' | 'desc'): R[] {
  const sign = order === 'asc' ? -1 : 1;
  const key = (r: R) => (r as Record<string, string>)[column];
  const id = (r: R) => (r as Record<string, string>).id;
  return rows.sort((a, b) => {
    const x = key(a);
    const y = key(b);
    return sign * (x < y ? 1 : x > y ? -1 : id(a) < id(b) ? 1 : id(a) > id(b) ? -1 : 0);
  });
}
