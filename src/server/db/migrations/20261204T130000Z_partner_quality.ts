import { sql, type Kysely } from 'kysely';

// Partners that refuse flagged or low-quality leads (issue 29): the fraud flags a partner
// refuses and the lowest quality score it takes, as JSON (distribution/quality-rule.ts). Routing
// reads it with the partner's other columns (no read of its own). A constant default (takes
// every lead): both engines add the column without rewriting the table.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('partners')
    .addColumn('quality_rule', 'text', (c) => c.notNull().defaultTo(sql.lit('{"refuse_flags":[],"min_score":null}')))
    .execute();
}
