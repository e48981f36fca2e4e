import { sql, type Kysely } from 'kysely';
import { dropTrigger, installTrigger } from '../triggers/index.js';
import { leadsRollupDelete } from '../triggers/rollups.js';

// Issue 29, item 4: scheduled retention (modules/privacy/retention-*.ts). A lead whose contacts the
// retention purged keeps keyed digests of its email and phone (HMAC under the install's match key)
// so that intake's and imports' duplicate checks still find it; partial indexes hold only those
// leads (intake's writes of new leads, whose digests are null, never touch them); the events are
// found by lead. retention_runs:
// one row per run that had work, with its progress. The rollups' delete trigger is reinstalled:
// a lead the retention deletes stays counted (db/triggers/rollups.ts KEEP_ROLLUPS_KEY).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('leads').addColumn('email_digest', 'text').execute();
  await db.schema.alterTable('leads').addColumn('phone_digest', 'text').execute();
  await sql`create index leads_email_digest_created on leads (email_digest, created_at) where email_digest is not null`.execute(
    db,
  );
  await sql`create index leads_phone_digest_created on leads (phone_digest, created_at) where phone_digest is not null`.execute(
    db,
  );
  // The purge scrubs the events of its leads (the outbox keeps them 30 days) and the deletion
  // deletes them: found by lead.
  await sql`create index events_lead on events (lead_id) where lead_id is not null`.execute(db);
  await db.schema
    .createTable('retention_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('started_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('contacts_before', 'text')
    .addColumn('leads_before', 'text')
    .addColumn('contacts_purged', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('leads_deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .execute();
  await sql`create index retention_runs_started on retention_runs (started_at, id)`.execute(db);
  await dropTrigger(db, leadsRollupDelete);
  await installTrigger(db, leadsRollupDelete);
}
