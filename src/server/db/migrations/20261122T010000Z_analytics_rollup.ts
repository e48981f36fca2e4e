import { sql, PostgresAdapter, type Kysely } from 'kysely';

// Hourly rollups of leads for analytics, kept exact by triggers on leads (insert, delete, and
// updates of the columns they sum), so every writer — intake, distribution, postbacks, tests
// writing rows directly — keeps them right inside its own transaction.
//
// Why: a 30-day report over a million leads reads ~360,000 lead rows; the rollup holds one row
// per UTC hour and (traffic provider, campaign, flow, partner, country), about a quarter as many,
// with every measure pre-summed. A report sums rollup rows and folds the UTC hours into local
// days in the caller's time zone (modules/analytics). Hours are UTC, so the rollup serves every
// time zone; zones with :30/:45 offsets read the hours holding their midnights from leads.
//
// Missing references are stored as '' (not NULL) so they take part in the primary key and in
// ON CONFLICT on every engine. A writer updating leads holds the rollup rows it touched until
// it commits: keep such transactions short (no partner HTTP call inside one).
//
// lead_stats_hourly:     by registration hour (leads.created_at)
// lead_ftd_stats_hourly: by FTD hour (leads.ftd_at), for date_type=ftd

// Key order matters on SQLite, where the table is stored in key order: grouping by a prefix of
// it (hour; hour and country; hour, country and partner) needs no sort.
const KEY = ['hour', 'country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];
const VOLUME = ['n_leads', 'n_delivered', 'n_rejected', 'n_duplicate', 'n_failed', 'n_ftd', 'cost_cents', 'revenue_cents', 'revenue_no_ftd_cents'];
const FTD = ['n_ftd', 'revenue_cents'];
/** The lead columns the rollups depend on: an update of any other column changes nothing. */
const WATCHED = ['created_at', 'traffic_provider_id', 'campaign_id', 'flow_id', 'partner_id', 'country', 'status', 'ftd_at', 'cost_cents', 'revenue_cents'];

const flag = (cond: string) => `(case when ${cond} then 1 else 0 end)`;

function keyValues(r: string, timestamp: 'created_at' | 'ftd_at') {
  const value: Record<string, string> = {
    hour: `substr(${r}.${timestamp}, 1, 13)`,
    country: `${r}.country`,
    partner_id: `coalesce(${r}.partner_id, '')`,
    campaign_id: `coalesce(${r}.campaign_id, '')`,
    traffic_provider_id: `${r}.traffic_provider_id`,
    flow_id: `coalesce(${r}.flow_id, '')`,
  };
  return KEY.map((k) => value[k]);
}

function upsert(table: string, columns: string[], values: string[], where?: string) {
  const sets = columns.slice(KEY.length).map((c) => `${c} = ${table}.${c} + excluded.${c}`);
  // SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT (parsing ambiguity); harmless elsewhere.
  return `insert into ${table} (${columns.join(', ')}) select ${values.join(', ')} where ${where ?? '1 = 1'} on conflict (${KEY.join(', ')}) do update set ${sets.join(', ')}`;
}

/** The statements adding (sign 1) or removing (sign -1) one lead row `r` (NEW or OLD). */
function contribution(r: string, sign: 1 | -1): string[] {
  const s = (e: string) => `${sign} * ${e}`;
  const volume = upsert('lead_stats_hourly', [...KEY, ...VOLUME], [
    ...keyValues(r, 'created_at'),
    `${sign}`,
    s(flag(`${r}.status = 'delivered'`)),
    s(flag(`${r}.status = 'rejected'`)),
    s(flag(`${r}.status = 'duplicate'`)),
    s(flag(`${r}.status = 'failed'`)),
    s(flag(`${r}.ftd_at is not null`)),
    s(`${r}.cost_cents`),
    s(`${r}.revenue_cents`),
    s(`(case when ${r}.ftd_at is null then ${r}.revenue_cents else 0 end)`),
  ]);
  const ftd = upsert('lead_ftd_stats_hourly', [...KEY, ...FTD], [...keyValues(r, 'ftd_at'), `${sign}`, s(`${r}.revenue_cents`)], `${r}.ftd_at is not null`);
  return [volume, ftd];
}

async function createRollup(db: Kysely<any>, table: string, measures: string[], postgres: boolean) {
  let t = db.schema.createTable(table);
  for (const c of KEY) t = t.addColumn(c, 'text', (col) => col.notNull());
  for (const c of measures) t = t.addColumn(c, c.startsWith('n_') ? 'integer' : 'bigint', (col) => col.notNull());
  t = t.addPrimaryKeyConstraint(`${table}_pk`, KEY as any);
  // SQLite: cluster the rows by the key, so an hour range is one ordered read of the table.
  if (!postgres) t = t.modifyEnd(sql`without rowid`);
  await t.execute();
  // PostgreSQL: room on each page for the constant updates of the current hour to stay HOT.
  if (postgres) await sql.raw(`alter table ${table} set (fillfactor = 80)`).execute(db);
}

export async function up(db: Kysely<any>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await createRollup(db, 'lead_stats_hourly', VOLUME, postgres);
  await createRollup(db, 'lead_ftd_stats_hourly', FTD, postgres);

  // What leads already exist (a database upgraded in place).
  await sql
    .raw(
      `insert into lead_stats_hourly (${[...KEY, ...VOLUME].join(', ')}) select ${[
        ...keyValues('leads', 'created_at'),
        'count(*)',
        `sum(${flag(`status = 'delivered'`)})`,
        `sum(${flag(`status = 'rejected'`)})`,
        `sum(${flag(`status = 'duplicate'`)})`,
        `sum(${flag(`status = 'failed'`)})`,
        'count(ftd_at)',
        'sum(cost_cents)',
        'sum(revenue_cents)',
        'sum(case when ftd_at is null then revenue_cents else 0 end)',
      ].join(', ')} from leads group by 1, 2, 3, 4, 5, 6`,
    )
    .execute(db);
  await sql
    .raw(
      `insert into lead_ftd_stats_hourly (${[...KEY, ...FTD].join(', ')}) select ${[...keyValues('leads', 'ftd_at'), 'count(*)', 'sum(revenue_cents)'].join(', ')} ` +
        `from leads where ftd_at is not null group by 1, 2, 3, 4, 5, 6`,
    )
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
      [...contribution('old', -1), ...contribution('new', 1)],
    ],
  ];
  for (const [name, event, when, body] of triggers) {
    if (postgres) {
      await sql.raw(`create function ${name}() returns trigger language plpgsql as $$ begin ${body.join('; ')}; return null; end $$`).execute(db);
      await sql.raw(`create trigger ${name} after ${event} on leads for each row ${when ? `when (${when}) ` : ''}execute function ${name}()`).execute(db);
    } else {
      await sql.raw(`create trigger ${name} after ${event} on leads for each row ${when ? `when ${when} ` : ''}begin ${body.join('; ')}; end`).execute(db);
    }
  }
}
