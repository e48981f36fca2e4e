import { sql, PostgresAdapter, type Kysely } from 'kysely';

// A third hourly rollup, keyed by (hour, country) alone, for the reports that group or filter
// by nothing but time and country: the Overview's summary and charts and the day → country
// report. Over 90 days at a million leads it holds ~38,000 rows where lead_stats_hourly holds
// ~264,000 (bench/RESULTS.md), so those reports sum a seventh of the rows.
//
// It is kept exact by the same triggers as the other rollups (20261122T010000Z_analytics_rollup),
// rewritten here whole. What changes for the writers: an update that leaves a lead in the same
// rollup rows (a status change, an FTD: nearly every update) now applies the difference as one
// upsert per rollup, where it used to take the old row out and put the new one in (two). So a
// lead's insert and its delivery's status change cost four upserts, as before the new rollup:
// one more on insert, one fewer on update.

const FULL_KEY = ['hour', 'country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];
const COUNTRY_KEY = ['hour', 'country'];
const VOLUME = ['n_leads', 'n_delivered', 'n_rejected', 'n_duplicate', 'n_failed', 'n_ftd', 'cost_cents', 'revenue_cents', 'revenue_no_ftd_cents'];
const FTD = ['n_ftd', 'revenue_cents'];
const WATCHED = ['created_at', 'traffic_provider_id', 'campaign_id', 'flow_id', 'partner_id', 'country', 'status', 'ftd_at', 'cost_cents', 'revenue_cents'];

const flag = (cond: string) => `(case when ${cond} then 1 else 0 end)`;

function keyValue(r: string, column: string, timestamp: 'created_at' | 'ftd_at'): string {
  if (column === 'hour') return `substr(${r}.${timestamp}, 1, 13)`;
  if (column === 'country' || column === 'traffic_provider_id') return `${r}.${column}`; // never null
  return `coalesce(${r}.${column}, '')`;
}

/** Lead row `r`'s contribution to each volume measure. */
function volumeOf(r: string): string[] {
  return [
    '1',
    flag(`${r}.status = 'delivered'`),
    flag(`${r}.status = 'rejected'`),
    flag(`${r}.status = 'duplicate'`),
    flag(`${r}.status = 'failed'`),
    flag(`${r}.ftd_at is not null`),
    `${r}.cost_cents`,
    `${r}.revenue_cents`,
    `(case when ${r}.ftd_at is null then ${r}.revenue_cents else 0 end)`,
  ];
}

function upsert(table: string, key: string[], measures: string[], values: string[], where: string) {
  const sets = measures.map((c) => `${c} = ${table}.${c} + excluded.${c}`);
  // SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT (parsing ambiguity); harmless elsewhere.
  return `insert into ${table} (${[...key, ...measures].join(', ')}) select ${values.join(', ')} where ${where} on conflict (${key.join(', ')}) do update set ${sets.join(', ')}`;
}

const VOLUME_TABLES: [table: string, key: string[]][] = [
  ['lead_stats_hourly', FULL_KEY],
  ['lead_country_stats_hourly', COUNTRY_KEY],
];

/** Lead row `r`'s FTD (if it has one) added to or taken from the FTD rollup, by its FTD hour. */
const ftdContribution = (r: string, sign: 1 | -1) =>
  upsert('lead_ftd_stats_hourly', FULL_KEY, FTD, [...FULL_KEY.map((k) => keyValue(r, k, 'ftd_at')), `${sign}`, `${sign} * ${r}.revenue_cents`], `${r}.ftd_at is not null`);

/** Adds (1) or takes away (-1) lead row `r` (NEW or OLD) in every rollup. */
function contribution(r: string, sign: 1 | -1): string[] {
  const out = VOLUME_TABLES.map(([table, key]) =>
    upsert(table, key, VOLUME, [...key.map((k) => keyValue(r, k, 'created_at')), ...volumeOf(r).map((v) => `${sign} * ${v}`)], '1 = 1'),
  );
  out.push(ftdContribution(r, sign));
  return out;
}

/** An update: the difference alone where the lead stays in the same row, else out of the old and into the new. */
function change(): string[] {
  const out: string[] = [];
  const newVolume = volumeOf('new');
  const oldVolume = volumeOf('old');
  for (const [table, key] of VOLUME_TABLES) {
    const [oldKey, newKey] = [key.map((k) => keyValue('old', k, 'created_at')), key.map((k) => keyValue('new', k, 'created_at'))];
    const same = oldKey.map((v, i) => `${v} = ${newKey[i]}`).join(' and ');
    out.push(upsert(table, key, VOLUME, [...newKey, ...newVolume.map((v, i) => `${v} - ${oldVolume[i]}`)], same));
    out.push(upsert(table, key, VOLUME, [...oldKey, ...oldVolume.map((v) => `-1 * ${v}`)], `not (${same})`));
    out.push(upsert(table, key, VOLUME, [...newKey, ...newVolume], `not (${same})`));
  }
  // FTDs are rare: out and in.
  out.push(ftdContribution('old', -1), ftdContribution('new', 1));
  return out;
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  let t = db.schema.createTable('lead_country_stats_hourly');
  for (const c of COUNTRY_KEY) t = t.addColumn(c, 'text', (col) => col.notNull());
  for (const c of VOLUME) t = t.addColumn(c, c.startsWith('n_') ? 'integer' : 'bigint', (col) => col.notNull());
  t = t.addPrimaryKeyConstraint('lead_country_stats_hourly_pk', COUNTRY_KEY as any);
  if (!postgres) t = t.modifyEnd(sql`without rowid`);
  await t.execute();
  if (postgres) await sql.raw(`alter table lead_country_stats_hourly set (fillfactor = 80)`).execute(db);
  await sql
    .raw(`insert into lead_country_stats_hourly select hour, country, ${VOLUME.map((c) => `sum(${c})`).join(', ')} from lead_stats_hourly group by hour, country`)
    .execute(db);

  const triggers: [name: string, event: string, when: string | null, body: string[]][] = [
    ['leads_rollup_insert', 'insert', null, contribution('new', 1)],
    ['leads_rollup_delete', 'delete', null, contribution('old', -1)],
    [
      'leads_rollup_update',
      `update of ${WATCHED.join(', ')}`,
      postgres
        ? `(${WATCHED.map((c) => `old.${c}`).join(', ')}) is distinct from (${WATCHED.map((c) => `new.${c}`).join(', ')})`
        : WATCHED.map((c) => `old.${c} is not new.${c}`).join(' or '),
      change(),
    ],
  ];
  for (const [name, event, when, body] of triggers) {
    if (postgres) {
      // The triggers stay; their functions are replaced.
      await sql.raw(`create or replace function ${name}() returns trigger language plpgsql as $$ begin ${body.join('; ')}; return null; end $$`).execute(db);
    } else {
      await sql.raw(`drop trigger ${name}`).execute(db);
      await sql.raw(`create trigger ${name} after ${event} on leads for each row ${when ? `when ${when} ` : ''}begin ${body.join('; ')}; end`).execute(db);
    }
  }
}
