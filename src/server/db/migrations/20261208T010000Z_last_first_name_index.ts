import { sql, PostgresAdapter, type Kysely } from 'kysely';

// Issue 30: a search for a first and last name ("Ava Jones") where each name alone is common
// (at 10,000,000 demo leads, 226,000 and 305,000) read every lead with that last name from the
// table to test the first name: 413 ms a page, 786 ms with its count. With the first name in
// the last name's index the pair is tested on the index entries (the probe that chooses the
// plan reads no table row; the count of 32,000 pairs takes 15 ms), and last-name prefixes use it
// as before. It replaces leads_last_name_lower, so intake keeps the same number of indexes.
// The expressions are the ones modules/leads/search-plan.ts compares against (see
// 20261122T020000Z_lead_name_search).
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const lower = (column: string) =>
    postgres ? sql`(lower(${sql.ref(column)}) collate "C")` : sql`lower(${sql.ref(column)})`;
  await sql`drop index leads_last_name_lower`.execute(db);
  await sql`create index leads_last_first_lower on leads (${lower('last_name')}, ${lower('first_name')})`.execute(db);
}
