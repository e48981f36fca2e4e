import { type Kysely } from 'kysely';

// Re-injection jobs (issue 28, item 1): stored leads sent again to a flow or to chosen partners,
// at a pace, as a durable job. The job's leads are chosen once, when it is created (its items),
// so the set is fixed and its count known; the worker (modules/injections/worker.ts) works the
// items one process at a time per job (the job row's lease) and claims each item before the
// engine is called, so a crash never sends a lead twice. Attempts a job made carry its id.

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('injection_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // scheduled | running | paused | cancelled | done
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('flow_id', 'text', (c) => c.references('flows.id'))
    // JSON array of partner ids, in the order they are offered a lead (null: flow_id)
    .addColumn('partner_ids', 'text')
    .addColumn('per_minute', 'integer', (c) => c.notNull())
    .addColumn('start_at', 'text')
    // JSON {time_zone, from, to} or null: any time
    .addColumn('window', 'text')
    .addColumn('reoffer', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON: the filter or {lead_ids: n} the leads were chosen by (what the audit log also keeps)
    .addColumn('selection', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    // The pace's token bucket: leads that may be sent now, as of tokens_at (null: not started).
    .addColumn('tokens', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('tokens_at', 'text')
    // One process at a time works a job: a lease claimed by a conditional UPDATE.
    .addColumn('lease_holder', 'text')
    .addColumn('lease_until', 'text')
    .execute();
  await db.schema.createIndex('injection_jobs_state').on('injection_jobs').columns(['state']).execute();
  await db.schema
    .createIndex('injection_jobs_created')
    .on('injection_jobs')
    .columns(['created_at', 'id'])
    .execute();

  await db.schema
    .createTable('injection_items')
    .addColumn('job_id', 'text', (c) => c.notNull().references('injection_jobs.id'))
    .addColumn('lead_id', 'text', (c) => c.notNull().references('leads.id'))
    // pending | sent | delivered | refused | skipped
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('partner_id', 'text')
    .addColumn('at', 'text')
    .addPrimaryKeyConstraint('injection_items_pk', ['job_id', 'lead_id'])
    .execute();
  await db.schema
    .createIndex('injection_items_state')
    .on('injection_items')
    .columns(['job_id', 'state', 'lead_id'])
    .execute();
  await db.schema.createIndex('injection_items_sent').on('injection_items').columns(['state']).execute();
  // A lead's items (the recovery sweep asks whether a job is sending the lead it resumes).
  await db.schema.createIndex('injection_items_lead').on('injection_items').columns(['lead_id', 'state']).execute();

  await db.schema.alterTable('lead_attempts').addColumn('injection_id', 'text').execute();
}
