import { sql, PostgresAdapter, type Kysely } from 'kysely';

// Caps the way operators write them (issue 16): hourly caps on partners and flow targets, total
// caps and daily caps per lead country on flow targets, and a target's caps counted on FTDs
// instead of deliveries (counted when the FTD is recorded, conversions/apply.ts).
//
// cap_counters rows now carry what they count (partner, flow, kind, country, counting basis)
// and the cap they were last compared with, written by the reservation itself. The cap alerts'
// trigger reads them from the row, instead of parsing the scope and looking the cap up again,
// so every kind of cap raises partner.cap_nearly_full and partner.cap_full the same way.
//
// Deals (distribution/prices.ts): partners.deal, what a partner pays per lead or per FTD, per
// country, with a CPL deal's conversion-rate guarantee; leads.crg_bp, the guarantee a lead was
// delivered under.
//
// leads.verdicts: why each candidate of the lead's flow was not offered the lead (country,
// hours, a cap full with its numbers, paused, deleted), as JSON, written with the delivery's
// outcome: the answer to "why did this lead not go to partner X?".

const ALERT_NOW = { sqlite: `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`, postgres: `to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')` };
type Engine = 'sqlite' | 'postgres';

/** Cap alerts: the change that reaches 90 % of a cap, and the one that fills it; once per cap and period. */
function capBody(engine: Engine): string[] {
  const json = engine === 'postgres' ? 'json_build_object' : 'json_object';
  const near = '(new.cap * 9 + 9) / 10'; // 90 %, rounded up, in integers on both engines
  const type = `case when new.used >= new.cap then 'partner.cap_full' else 'partner.cap_nearly_full' end`;
  const data =
    `${json}('cap_kind', new.cap_kind, 'flow_id', new.flow_id, 'period', new.period, 'used', new.used, 'cap', new.cap, ` +
    `'country', new.country, 'counts', new.counts)${engine === 'postgres' ? '::text' : ''}`;
  return [
    `insert into events (type, occurred_at, partner_id, data, dedupe_key) ` +
      `select ${type}, ${ALERT_NOW[engine]}, new.partner_id, ${data}, ${type} || ':' || new.scope || ':' || new.period ` +
      `where new.partner_id is not null and new.cap is not null and new.cap > 0 ` +
      `and ((new.used >= new.cap and old.used < new.cap) or (new.used >= ${near} and old.used < ${near} and new.used < new.cap)) ` +
      `on conflict do nothing`,
  ];
}

export async function up(db: Kysely<any>): Promise<void> {
  const engine: Engine = db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
  const run = (q: string) => sql.raw(q).execute(db);

  await run(`alter table partners add column hourly_cap integer`);
  await run(`alter table flow_targets add column hourly_cap integer`);
  await run(`alter table flow_targets add column total_cap integer`);
  await run(`alter table flow_targets add column country_caps text not null default '{}'`);
  await run(`alter table flow_targets add column cap_counts text not null default 'deliveries'`);

  for (const column of ['partner_id text', 'flow_id text', 'cap_kind text', 'country text', 'counts text', 'cap integer']) {
    await run(`alter table cap_counters add column ${column}`);
  }
  // Counters written before: what they count, from their scope (the next reservation sets the cap).
  await run(
    `update cap_counters set partner_id = substr(scope, 9), counts = 'deliveries', ` +
      `cap_kind = case when period = 'total' then 'total' else 'daily' end where scope like 'partner:%'`,
  );
  await run(
    `update cap_counters set partner_id = (select t.partner_id from flow_targets t where t.id = substr(cap_counters.scope, 8)), ` +
      `flow_id = (select t.flow_id from flow_targets t where t.id = substr(cap_counters.scope, 8)), counts = 'deliveries', cap_kind = 'flow_daily' ` +
      `where scope like 'target:%'`,
  );

  await run(`alter table leads add column verdicts text`);

  // Deals: what a partner pays (JSON like a campaign's payout, distribution/prices.ts), and the
  // conversion-rate guarantee a delivered lead was sold under (basis points), for the CRG report.
  await run(`alter table partners add column deal text`);
  await run(`alter table leads add column crg_bp integer`);
  await run(`create index leads_crg on leads (partner_id, delivered_at) where crg_bp is not null`);

  if (engine === 'postgres') {
    await run(`create or replace function cap_counters_events() returns trigger language plpgsql as $$ begin ${capBody(engine).join('; ')}; return null; end $$`);
  } else {
    await run(`drop trigger cap_counters_events`);
    await run(`create trigger cap_counters_events after update of used on cap_counters for each row when new.used > old.used begin ${capBody(engine).join('; ')}; end`);
  }
}
