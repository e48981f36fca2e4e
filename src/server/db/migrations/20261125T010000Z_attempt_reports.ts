import type { Kysely } from 'kysely';

// Partner performance (GET /api/analytics/partners) reads the attempts of a date range across
// every partner: by time first, so a range is one index range, not a scan of every attempt.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('lead_attempts_requested').on('lead_attempts').columns(['requested_at', 'partner_id']).execute();
}
