import { sql, PostgresAdapter, type Kysely } from 'kysely';

// Name search in the Leads table (q) is a case-insensitive prefix match. Without an index a
// name that matches few leads scans the whole table (about a second per million leads); with
// these, it is a range scan on both engines. The expressions must be exactly the ones
// modules/leads/queries.ts compares against:
//   SQLite:     lower(first_name)               (binary order)
//   PostgreSQL: (lower(first_name) collate "C")  (byte order: a prefix is a range whatever the
//               database's collation, which may order "a-b" and "ab" as neighbours)
export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  for (const column of ['first_name', 'last_name']) {
    const expr = postgres ? sql`(lower(${sql.ref(column)}) collate "C")` : sql`lower(${sql.ref(column)})`;
    await db.schema.createIndex(`leads_${column}_lower`).on('leads').expression(expr).execute();
  }
}
