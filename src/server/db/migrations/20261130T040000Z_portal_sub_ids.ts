import type { Kysely } from 'kysely';

// The portal's search (issue 27): a provider looks a lead up by a value of any of its sub ids
// (its own click id, usually). Without an index that walked the provider's leads comparing five
// columns of each row: at 1,000,000 leads over 50 providers, 86 ms (p50) on SQLite, where a lookup
// in these takes a few (bench/RESULTS.md). One partial index per sub id, led by the provider so a
// provider's lookup never reads another's entries; leads without that sub id are not in it.
// Also serves the operators' Leads filter "provider + sub id".

const SUB_IDS = ['sub_id1', 'sub_id2', 'sub_id3', 'sub_id4', 'sub_id5'];

export async function up(db: Kysely<any>): Promise<void> {
  for (const column of SUB_IDS)
    await db.schema
      .createIndex(`leads_provider_${column}`)
      .on('leads')
      .columns(['traffic_provider_id', column])
      .where(column, 'is not', null)
      .execute();
}
