import { sql, type Kysely } from 'kysely';

// Issue 30: the Leads filter "Autologin opened" starts from the opened links when they are few
// (leads/search-queries.ts, linkedDrive), and first asks how many there are. This partial index
// holds only the opened links, so that question and the drive read only them, however many
// links were never opened.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index autologin_links_opened on autologin_links (lead_id) where opens > 0`.execute(db);
}
