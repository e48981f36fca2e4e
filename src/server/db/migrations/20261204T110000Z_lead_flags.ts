import { type Kysely } from 'kysely';

// Fraud flags (issue 29, item 2): what intake found doubtful about a lead, as a bit mask
// (modules/quality/flags.ts names the bits; a bit's meaning never changes), and the quality
// score (0–100) its flags gave with the weights of the time. A constant default: both engines
// add the columns without rewriting the table. Leads stored before have no score (null).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').addColumn('flags', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('leads').addColumn('quality_score', 'integer').execute();
}
