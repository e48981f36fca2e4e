import { sql, type Kysely } from 'kysely';

// Issue 30: Leads filters whose matches may be rare, and which walked every lead on SQLite when
// they were (about 8 s at 10,000,000 leads, on the connection intake also needs):
// - "Autologin opened" starts from the opened links when they are few (leads/search-plan.ts,
//   linkedDrive), and first asks how many there are: autologin_links_opened holds only those, so
//   the question and the drive read only them, however many links were never opened;
// - a fraud flag, "Flagged" and a score cap under 100 walk leads_flagged, which holds only the
//   flagged leads in registration order. A lead without flags (most of them) adds no entry.
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index autologin_links_opened on autologin_links (lead_id) where opens > 0`.execute(db);
  await sql`create index leads_flagged on leads (created_at, id) where flags <> 0`.execute(db);
}
