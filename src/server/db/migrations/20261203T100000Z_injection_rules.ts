import { type Kysely } from 'kysely';

// Recurring re-injection rules (issue 28, item 1): "every day at 10:00 Berlin, leads refused in
// the last 7 days from campaign X go to flow Y". Each scheduled occurrence makes at most one
// re-injection job: its run row (primary key rule_id + occurrence) is inserted in the transaction
// that creates the job, so two processes on one database never make two. The job keeps its rule.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('injection_rules')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    // JSON: the Leads filters with last_days instead of dates
    .addColumn('filter', 'text', (c) => c.notNull())
    // No foreign key: a flow a rule names may still be deleted (then its runs are skipped, saying why).
    .addColumn('flow_id', 'text')
    // JSON array of partner ids (null: flow_id)
    .addColumn('partner_ids', 'text')
    .addColumn('per_minute', 'integer', (c) => c.notNull())
    // JSON {time_zone, from, to} or null: any time
    .addColumn('window', 'text')
    .addColumn('reoffer', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON {time_zone, at, days}
    .addColumn('schedule', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    // Occurrences before this instant never run (set when the rule is made, enabled or rescheduled).
    .addColumn('armed_at', 'text', (c) => c.notNull())
    // Who made it: a run has this operator's rights now.
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('injection_rules_created')
    .on('injection_rules')
    .columns(['created_at', 'id'])
    .execute();

  await db.schema
    .createTable('injection_rule_runs')
    .addColumn('rule_id', 'text', (c) => c.notNull().references('injection_rules.id').onDelete('cascade'))
    // The scheduled instant this run is for (ISO UTC)
    .addColumn('occurrence_at', 'text', (c) => c.notNull())
    // The job it made, or why it made none
    .addColumn('job_id', 'text')
    .addColumn('skipped', 'text')
    .addColumn('at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('injection_rule_runs_pk', ['rule_id', 'occurrence_at'])
    .execute();

  await db.schema.alterTable('injection_jobs').addColumn('rule_id', 'text').execute();
}
