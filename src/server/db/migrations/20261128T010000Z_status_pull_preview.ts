import { sql, type Kysely } from 'kysely';

// A status pull changes leads (and the first FTD reported wins, so a wrong pull cannot be undone):
// it may run live only once a dry run of the same settings has been made (issue 26). previewed is
// the fingerprint of the settings the last dry run used (modules/status-pull/service.ts).

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table partner_status_pulls add column previewed text`.execute(db);
}
