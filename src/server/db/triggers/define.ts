import type { Engine } from '../database.js';

/**
 * One trigger as it is today, on both engines: the SQL that creates it and the SQL that drops
 * it. On PostgreSQL a trigger executes a function (plpgsql, returning null): the function is
 * created (or replaced) with it, and dropped with it unless other triggers share it.
 */
export interface TriggerDefinition {
  name: string;
  table: string;
  sqlite: { create: string; drop: string };
  postgres: {
    /** The trigger function's name and its source (the text between the $$). */
    function: string;
    source: string;
    /** Create (or replace) the function, then create the trigger. */
    create: string[];
    /** Drop the trigger, then its function unless shared. */
    drop: string[];
  };
}

/** What a trigger does on one engine: an optional WHEN condition and the statements it runs. */
export interface TriggerBody {
  when: string | null;
  body: string[];
}

/**
 * A trigger after `event` (insert, delete, update [of columns]) on `table`, for each row.
 * `sharedFunction`: on PostgreSQL, execute this function (several triggers share it) instead of
 * one named like the trigger; its source is still `build('postgres').body`.
 */
export function defineTrigger(
  name: string,
  table: string,
  event: string,
  build: (engine: Engine) => TriggerBody,
  sharedFunction?: string,
): TriggerDefinition {
  const lite = build('sqlite');
  const pg = build('postgres');
  const fn = sharedFunction ?? name;
  const source = ` begin ${pg.body.join('; ')}; return null; end `;
  return {
    name,
    table,
    sqlite: {
      create: `create trigger ${name} after ${event} on ${table} for each row ${lite.when ? `when ${lite.when} ` : ''}begin ${lite.body.join('; ')}; end`,
      drop: `drop trigger ${name}`,
    },
    postgres: {
      function: fn,
      source,
      create: [
        `create or replace function ${fn}() returns trigger language plpgsql as $$${source}$$`,
        `create trigger ${name} after ${event} on ${table} for each row ${pg.when ? `when (${pg.when}) ` : ''}execute function ${fn}()`,
      ],
      drop: [`drop trigger ${name} on ${table}`, ...(sharedFunction ? [] : [`drop function ${fn}()`])],
    },
  };
}

/**
 * PostgreSQL: `then` when `cond` holds, else `otherwise`, as one plpgsql statement. A trigger's
 * statement whose WHERE is false still pays the executor's start (its target's indexes opened,
 * its plan set up); an IF on the row's values costs an expression.
 */
export const pgIf = (cond: string, then: string[], otherwise: string[] = []) =>
  `if ${cond} then ${then.join('; ')};${otherwise.length ? ` else ${otherwise.join('; ')};` : ''} end if`;

/** Now, as the text every timestamp column holds (ISO 8601, milliseconds, UTC). */
export const ALERT_NOW: Record<Engine, string> = {
  sqlite: `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`,
  postgres: `to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
};
