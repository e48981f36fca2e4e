import type { Kysely } from 'kysely';
import { nowIso } from '../db/ids.js';
import type { Database } from '../db/tables.js';
import type { EventType } from './types.js';

export interface NewEvent {
  type: EventType;
  partner_id?: string | null;
  traffic_provider_id?: string | null;
  campaign_id?: string | null;
  lead_id?: string | null;
  data: Record<string, unknown>;
  /** An event with a key already written is not written again. */
  dedupe_key?: string;
}

/**
 * Writes an event that no row change tells of (triggers write the rest). Pass the transaction
 * of the change it reports: the events trigger fans it out to its destinations in it.
 */
export async function emitEvent(db: Kysely<Database>, e: NewEvent): Promise<void> {
  await db
    .insertInto('events')
    .values({
      type: e.type,
      occurred_at: nowIso(),
      lead_id: e.lead_id ?? null,
      partner_id: e.partner_id ?? null,
      traffic_provider_id: e.traffic_provider_id ?? null,
      campaign_id: e.campaign_id ?? null,
      data: JSON.stringify(e.data),
      dedupe_key: e.dedupe_key ?? null,
    })
    .onConflict((oc) => oc.doNothing())
    .execute();
}
