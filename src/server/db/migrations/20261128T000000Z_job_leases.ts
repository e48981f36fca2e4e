import { sql, type Kysely } from 'kysely';

// Background jobs that must run on one process at a time on a shared database take a lease here
// (jobs/lease.ts): one row per job name, claimed by a conditional UPDATE, running out by itself.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table job_leases (name text primary key, holder text, lease_until text)`.execute(db);
}
