import { sql, type Kysely } from 'kysely';

// A traffic provider gets at most one postback per lead and status event (a redelivered lead
// rejected again must not send a second "rejected"): the postback destination looks up what a
// provider already had for the leads it sends about. Only postback deliveries carry this index.

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index event_deliveries_postback_lead on event_deliveries (destination_id, lead_id) where destination_kind = 'postback'`.execute(
    db,
  );
}
