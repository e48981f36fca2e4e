import { sql, type Kysely } from 'kysely';

// The review queue (issue 29, item 3): a traffic provider or a flow may hold flagged or
// low-scoring leads for an operator's review instead of routing them (status `held`). The rule
// is JSON (modules/quality/review-rule.ts), a constant default that holds nothing: both engines
// add the columns without rewriting the tables. The queue is read oldest first, from a partial
// index that holds only the held leads (small, whatever the size of the lead table).

const HOLDS_NOTHING = '{"hold_flags":[],"min_score":null}';

export async function up(db: Kysely<any>): Promise<void> {
  for (const table of ['traffic_providers', 'flows'])
    await db.schema
      .alterTable(table)
      .addColumn('review_rule', 'text', (c) => c.notNull().defaultTo(sql.lit(HOLDS_NOTHING)))
      .execute();
  await sql`create index leads_held on leads (created_at, id) where status = 'held'`.execute(db);
}
