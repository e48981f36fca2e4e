import { sql, PostgresAdapter, type Kysely } from 'kysely';

// A traffic provider's verifiable history (issue 27, modules/provider-log/): every fact it is
// shown about its leads, hash-chained per provider, with signed checkpoints of each chain head.
// A fact is first written to provider_log_pending in the transaction that records it (one small
// insert: intake pays no hashing), and becomes visible at visible_at (an FTD after the provider's
// hold); the provider-log job chains the due ones into provider_log, one process at a time.

export async function up(db: Kysely<any>): Promise<void> {
  const pg = db.getExecutor().adapter instanceof PostgresAdapter;
  const serial = pg ? 'bigint generated always as identity primary key' : 'integer primary key autoincrement';
  const run = (q: string) => sql.raw(q).execute(db);

  await run(
    `create table provider_log_pending (id ${serial}, traffic_provider_id text not null, lead_id text not null, ` +
      `kind text not null, data text not null, recorded_at text not null, visible_at text not null)`,
  );
  await run(`create index provider_log_pending_due on provider_log_pending (visible_at, id)`);
  // No index on lead_id: only an FTD reversed during its hold looks a lead up, in a table that
  // holds the last seconds' facts and the FTDs on hold; every index here costs each lead's intake.

  // Append only: an entry is never updated (a correction is a new entry).
  await run(
    `create table provider_log (traffic_provider_id text not null, seq integer not null, at text not null, ` +
      `lead_id text not null, kind text not null, data text not null, prev_hash text not null, hash text not null, ` +
      `primary key (traffic_provider_id, seq))`,
  );

  await run(
    `create table provider_log_checkpoints (traffic_provider_id text not null, seq integer not null, hash text not null, ` +
      `signed_at text not null, signature text not null, key_id text not null, primary key (traffic_provider_id, seq))`,
  );
}
