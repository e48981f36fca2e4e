import { type Kysely } from 'kysely';
import { dropTrigger, installTrigger } from '../triggers/index.js';
import { leadsEventsInsert } from '../triggers/lead-events.js';

// CSV imports (issue 28, item 2): a file uploaded in chunks cut at row boundaries (so any
// process on a shared PostgreSQL can work it and memory stays flat), worked a chunk at a time by
// one process (the import row's lease), each chunk's leads, bad rows and the import's cursor
// committed together. Imported leads carry their import's id; their insert emits no lead event
// (an import of a million rows is not a million webhooks: the import is audited instead).

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('imports')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // uploading | uploaded | validating | validated | importing | done | cancelled | failed
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('bytes', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rows', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON array: the header's column names
    .addColumn('columns', 'text', (c) => c.notNull())
    .addColumn('header_hash', 'text', (c) => c.notNull())
    // The work started last (dry run or import): JSON mapping, target, mode, route
    .addColumn('mapping', 'text')
    .addColumn('traffic_provider_id', 'text', (c) => c.references('traffic_providers.id'))
    .addColumn('campaign_id', 'text', (c) => c.references('campaigns.id'))
    // store | route (null until an import is started)
    .addColumn('mode', 'text')
    // JSON {flow_id | partner_ids, per_minute} for mode route
    .addColumn('route', 'text')
    .addColumn('injection_id', 'text')
    // The cursor: the next chunk to work, and the counts of the work so far
    .addColumn('next_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rows_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('good', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('bad', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('duplicates', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('imported', 'integer', (c) => c.notNull().defaultTo(0))
    // JSON: the last dry run's summary
    .addColumn('dry_run', 'text')
    .addColumn('error', 'text')
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('lease_holder', 'text')
    .addColumn('lease_until', 'text')
    .execute();
  await db.schema.createIndex('imports_state').on('imports').columns(['state']).execute();
  await db.schema.createIndex('imports_created').on('imports').columns(['created_at', 'id']).execute();

  await db.schema
    .createTable('import_chunks')
    .addColumn('import_id', 'text', (c) => c.notNull().references('imports.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    // The data row (1 = the first after the header) the chunk starts with
    .addColumn('first_row', 'integer', (c) => c.notNull())
    .addColumn('row_count', 'integer', (c) => c.notNull())
    // JSON array of rows, each an array of cells
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_chunks_pk', ['import_id', 'seq'])
    .execute();

  // The bad rows of the last dry run or import.
  await db.schema
    .createTable('import_errors')
    .addColumn('import_id', 'text', (c) => c.notNull().references('imports.id'))
    .addColumn('row', 'integer', (c) => c.notNull())
    .addColumn('field', 'text', (c) => c.notNull())
    .addColumn('column_name', 'text')
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('value', 'text')
    .addPrimaryKeyConstraint('import_errors_pk', ['import_id', 'row', 'field'])
    .execute();

  // The duplicate-checked values of the rows worked so far (a later row with one is a duplicate).
  await db.schema
    .createTable('import_keys')
    .addColumn('import_id', 'text', (c) => c.notNull().references('imports.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('row', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('import_keys_pk', ['import_id', 'key'])
    .execute();

  // The mapping last used for a header (by a hash of its normalized names).
  await db.schema
    .createTable('import_mappings')
    .addColumn('header_hash', 'text', (c) => c.primaryKey())
    .addColumn('mapping', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('leads').addColumn('import_id', 'text').execute();
  await db.schema.createIndex('leads_import').on('leads').columns(['import_id']).execute();

  await dropTrigger(db, leadsEventsInsert);
  await installTrigger(db, leadsEventsInsert);
}
