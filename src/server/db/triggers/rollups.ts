import type { Engine } from '../database.js';
import { defineTrigger, pgIf } from './define.js';

// The hourly rollups of leads (lead_stats_hourly, lead_country_stats_hourly and
// lead_ftd_stats_hourly for analytics; lead_provider_stats_hourly for the providers' portal),
// kept exact by triggers on leads: insert, delete, and updates of the columns they sum, so every
// writer keeps them right inside its own transaction.
// From 20261205T200000Z_flagged_rollups (first 20261122T010000Z_analytics_rollup, then
// 20261125T050000Z_country_rollup, 20261130T050000Z_provider_rollup).
//
// An update that leaves a lead in the same rollup rows (a status change, an FTD) applies the
// difference as one upsert per rollup; one that moves it takes it out of the old rows and puts
// it in the new. Missing references are stored as '' so they take part in the primary key.
//
// n_flagged counts leads with any fraud flag (leads.flags <> 0). Intake sets flags and nothing
// changes them today; a change is still counted, by a trigger of its own (leadsRollupFlags) that
// fires when flags alone change (leads_rollup_update, firing for any watched column, takes a flags
// change made with them into account). Why apart: ROLLUP_TRIGGERS are also installed by
// 20261130T050000Z_provider_rollup, from this file, before leads.flags existed, and PostgreSQL
// checks the columns of UPDATE OF and WHEN when a trigger is created (not those of its body). So
// ROLLUP_TRIGGERS' events and conditions may name only columns that existed then.
//
// On PostgreSQL the choices are plpgsql IFs rather than each statement's WHERE: a statement whose
// WHERE is false still costs the executor's start (its target's indexes opened, its plan set up),
// and the update trigger ran eleven of them per delivery to apply four (bench/RESULTS.md, issue 30,
// "PostgreSQL's triggers"). SQLite's triggers have no IF; there the WHEREs choose.

const FULL_KEY = ['hour', 'country', 'partner_id', 'campaign_id', 'traffic_provider_id', 'flow_id'];
const COUNTRY_KEY = ['hour', 'country'];
/** Led by the provider: a provider's hours are one range of the table (SQLite stores it in key order). */
const PROVIDER_KEY = ['traffic_provider_id', 'hour'];
/** The measures of the rollups by registration hour (and of lead_stats_daily, their days: modules/analytics/lead-folds.ts). */
export const VOLUME = [
  'n_leads',
  'n_delivered',
  'n_rejected',
  'n_duplicate',
  'n_failed',
  'n_ftd',
  'cost_cents',
  'revenue_cents',
  'revenue_no_ftd_cents',
  'n_flagged',
];
const FTD = ['n_ftd', 'revenue_cents'];
/** The lead columns the rollups depend on: an update of any other column changes nothing. */
const WATCHED = [
  'created_at',
  'traffic_provider_id',
  'campaign_id',
  'flow_id',
  'partner_id',
  'country',
  'status',
  'ftd_at',
  'cost_cents',
  'revenue_cents',
];

const flag = (cond: string) => `(case when ${cond} then 1 else 0 end)`;

function keyValue(r: string, column: string, timestamp: 'created_at' | 'ftd_at'): string {
  if (column === 'hour') return `substr(${r}.${timestamp}, 1, 13)`;
  if (column === 'country' || column === 'traffic_provider_id') return `${r}.${column}`; // never null
  return `coalesce(${r}.${column}, '')`;
}

/** Lead row `r`'s contribution to each volume measure. */
function volumeOf(r: string): Record<string, string> {
  return {
    n_leads: '1',
    n_delivered: flag(`${r}.status = 'delivered'`),
    n_rejected: flag(`${r}.status = 'rejected'`),
    n_duplicate: flag(`${r}.status = 'duplicate'`),
    n_failed: flag(`${r}.status = 'failed'`),
    n_ftd: flag(`${r}.ftd_at is not null`),
    cost_cents: `${r}.cost_cents`,
    revenue_cents: `${r}.revenue_cents`,
    revenue_no_ftd_cents: `(case when ${r}.ftd_at is null then ${r}.revenue_cents else 0 end)`,
    // Leads with any fraud flag (db/lead-flags.ts): counted for operators' reports. The providers'
    // portal reads its rollup's columns by name and never this one (flags are the operator's judgment).
    n_flagged: flag(`${r}.flags <> 0`),
  };
}

/** Adds `values` to `table`'s row at `key`; `from`: the values are sums over a table's rows, grouped. */
function upsert(
  table: string,
  key: string[],
  measures: string[],
  values: string[],
  where: string,
  from?: { table: string; groupBy: string[] },
) {
  const sets = measures.map((c) => `${c} = ${table}.${c} + excluded.${c}`);
  const source = from ? ` from ${from.table}` : '';
  const grouped = from ? ` group by ${from.groupBy.join(', ')}` : '';
  // SQLite needs a WHERE before ON CONFLICT in INSERT … SELECT (parsing ambiguity); harmless elsewhere.
  return `insert into ${table} (${[...key, ...measures].join(', ')}) select ${values.join(', ')}${source} where ${where}${grouped} on conflict (${key.join(', ')}) do update set ${sets.join(', ')}`;
}

/** The rollups by registration hour: table, key, measures. */
const VOLUME_TABLES: [table: string, key: string[], measures: string[]][] = [
  ['lead_stats_hourly', FULL_KEY, VOLUME],
  ['lead_country_stats_hourly', COUNTRY_KEY, VOLUME],
  ['lead_provider_stats_hourly', PROVIDER_KEY, ['n_leads', 'n_delivered', 'n_ftd', 'cost_cents', 'n_flagged']],
];

/** Lead row `r`'s FTD (if it has one) added to or taken from the FTD rollup, by its FTD hour. */
function ftdContribution(engine: Engine, r: string, sign: 1 | -1): string {
  const has = `${r}.ftd_at is not null`;
  const statement = upsert(
    'lead_ftd_stats_hourly',
    FULL_KEY,
    FTD,
    [...FULL_KEY.map((k) => keyValue(r, k, 'ftd_at')), `${sign}`, `${sign} * ${r}.revenue_cents`],
    has,
  );
  return engine === 'postgres' ? pgIf(has, [statement]) : statement;
}

/** Adds (1) or takes away (-1) lead row `r` (NEW or OLD) in every rollup. */
function contribution(engine: Engine, r: string, sign: 1 | -1): string[] {
  const volume = volumeOf(r);
  const out = VOLUME_TABLES.map(([table, key, measures]) =>
    upsert(
      table,
      key,
      measures,
      [...key.map((k) => keyValue(r, k, 'created_at')), ...measures.map((m) => `${sign} * ${volume[m]}`)],
      '1 = 1',
    ),
  );
  out.push(ftdContribution(engine, r, sign));
  return out;
}

/** An update: the difference alone where the lead stays in the same row, else out of the old and into the new. */
function change(engine: Engine): string[] {
  const out: string[] = [];
  const newVolume = volumeOf('new');
  const oldVolume = volumeOf('old');
  for (const [table, key, measures] of VOLUME_TABLES) {
    const [oldKey, newKey] = [
      key.map((k) => keyValue('old', k, 'created_at')),
      key.map((k) => keyValue('new', k, 'created_at')),
    ];
    const same = oldKey.map((v, i) => `${v} = ${newKey[i]}`).join(' and ');
    const stays = (where: string) =>
      upsert(table, key, measures, [...newKey, ...measures.map((m) => `${newVolume[m]} - ${oldVolume[m]}`)], where);
    const moves = (where: string) => [
      upsert(table, key, measures, [...oldKey, ...measures.map((m) => `-1 * ${oldVolume[m]}`)], where),
      upsert(table, key, measures, [...newKey, ...measures.map((m) => newVolume[m])], where),
    ];
    if (engine === 'postgres') out.push(pgIf(same, [stays('1 = 1')], moves('1 = 1')));
    else out.push(stays(same), ...moves(`not (${same})`));
  }
  // FTDs are rare: out and in.
  out.push(ftdContribution(engine, 'old', -1), ftdContribution(engine, 'new', 1));
  return out;
}

export const leadsRollupInsert = defineTrigger('leads_rollup_insert', 'leads', 'insert', (engine) => ({
  when: null,
  body: contribution(engine, 'new', 1),
}));

/**
 * The settings row that, while the deleting transaction holds it, keeps deleted leads counted: the
 * retention's deletion of old leads (modules/privacy/retention-*.ts) inserts it, deletes its leads
 * and deletes it again before it commits, so no other transaction ever sees it (on PostgreSQL
 * others do not see an uncommitted row; SQLite has one writer). The row is in `settings`, a table
 * every migration finds: older migrations install this file's definitions too.
 */
export const KEEP_ROLLUPS_KEY = 'rollups.keep_deleted_leads';
const kept = `exists (select 1 from settings where key = '${KEEP_ROLLUPS_KEY}')`;

/**
 * A lead deleted takes its counts out of the rollups, except in a transaction holding
 * KEEP_ROLLUPS_KEY (PostgreSQL allows no subquery in WHEN: the function returns first).
 */
export const leadsRollupDelete = defineTrigger('leads_rollup_delete', 'leads', 'delete', (engine) =>
  engine === 'postgres'
    ? { when: null, body: [`if ${kept} then return null; end if`, ...contribution(engine, 'old', -1)] }
    : { when: `not ${kept}`, body: contribution(engine, 'old', -1) },
);

export const leadsRollupUpdate = defineTrigger(
  'leads_rollup_update',
  'leads',
  `update of ${WATCHED.join(', ')}`,
  (engine) => ({
    when:
      engine === 'postgres'
        ? `(${WATCHED.map((c) => `old.${c}`).join(', ')}) is distinct from (${WATCHED.map((c) => `new.${c}`).join(', ')})`
        : WATCHED.map((c) => `old.${c} is not new.${c}`).join(' or '),
    body: change(engine),
  }),
);

export const ROLLUP_TRIGGERS = [leadsRollupInsert, leadsRollupDelete, leadsRollupUpdate];

/** A change of flags alone (no watched column with it): n_flagged's difference where the lead is. */
export const leadsRollupFlags = defineTrigger('leads_rollup_flags', 'leads', 'update of flags', (engine) => ({
  when:
    engine === 'postgres'
      ? `old.flags is distinct from new.flags and (${WATCHED.map((c) => `old.${c}`).join(', ')}) is not distinct from (${WATCHED.map((c) => `new.${c}`).join(', ')})`
      : `old.flags is not new.flags and not (${WATCHED.map((c) => `old.${c} is not new.${c}`).join(' or ')})`,
  // Every measure (0 but n_flagged): the row exists, but both engines check NOT NULL on the
  // values an upsert would insert before they find the conflict.
  body: VOLUME_TABLES.filter(([, , measures]) => measures.includes('n_flagged')).map(([table, key, measures]) =>
    upsert(
      table,
      key,
      measures,
      [
        ...key.map((k) => keyValue('new', k, 'created_at')),
        ...measures.map((m) =>
          m === 'n_flagged' ? `${volumeOf('new').n_flagged} - ${volumeOf('old').n_flagged}` : '0',
        ),
      ],
      '1 = 1',
    ),
  ),
}));

/** Installed by 20261205T200000Z_flagged_rollups (leads.flags exists from 20261204T110000Z_lead_flags). */
export const FLAGS_ROLLUP_TRIGGERS = [leadsRollupFlags];

/**
 * The statements that add every lead in the table to the rollups, one grouped statement per
 * rollup (what the insert trigger adds row by row, from the same expressions). For a bulk load
 * into a table that had no leads, made with these triggers set aside (scripts/demo-data): added
 * to what the rollups hold, so counts the retention kept for deleted leads stay.
 */
export function rollupsOfAllLeads(): string[] {
  const volume = volumeOf('l');
  const out = VOLUME_TABLES.map(([table, key, measures]) => {
    const keys = key.map((k) => keyValue('l', k, 'created_at'));
    return upsert(table, key, measures, [...keys, ...measures.map((m) => `sum(${volume[m]})`)], '1 = 1', {
      table: 'leads l',
      groupBy: keys,
    });
  });
  const ftdKeys = FULL_KEY.map((k) => keyValue('l', k, 'ftd_at'));
  out.push(
    upsert(
      'lead_ftd_stats_hourly',
      FULL_KEY,
      FTD,
      [...ftdKeys, 'count(*)', 'sum(l.revenue_cents)'],
      'l.ftd_at is not null',
      {
        table: 'leads l',
        groupBy: ftdKeys,
      },
    ),
  );
  return out;
}
