// Writes the demo data set. Rows go in as multi-row INSERTs of precompiled SQL text (no query
// builder per row), inside big transactions on one connection: the fastest portable path on
// both engines without extra packages.
import { CompiledQuery, sql, type Kysely } from 'kysely';
import { isPostgres, type DB } from '../../src/server/db/database.js';
import { ATTEMPT_COLUMNS, HOUR_MS, LEAD_COLUMNS, LeadFactory, leadsPerHour } from './leads.js';
import { Rng } from './random.js';
import { putBack, setAside } from './set-aside.js';
import { prepareWorld, type WorldSize } from './setup.js';

export interface DemoOptions {
  leads: number;
  /** Spread the leads over this many days before `now` (default 90). */
  days?: number;
  seed?: number;
  /** The configuration to make when the database has none (default: the catalog's). */
  size?: WorldSize;
  /** Add to a database that already has leads. */
  append?: boolean;
  now?: Date;
  onProgress?: (done: number, total: number) => void;
  /** After the rows: the indexes and rollups being built (a load into a database without leads). */
  onBuild?: (done: number, total: number) => void;
}

export interface DemoResult {
  leads: number;
  attempts: number;
  partners: number;
  campaigns: number;
  configurationCreated: boolean;
  from: string;
  to: string;
}

export class DemoDataRefused extends Error {}

// Rows per statement: under SQLite's 32,766 and PostgreSQL's 65,535 bound parameters.
const LEAD_ROWS = 1000;
const ATTEMPT_ROWS = 2000;
const COMMIT_EVERY = 50_000;

const INTEGER_COLUMNS = new Set([
  'attempt_no',
  'duration_ms',
  'http_status',
  'cost_cents',
  'revenue_cents',
  'flags',
  'quality_score',
]);

// SQLite: one multi-row VALUES statement. PostgreSQL: one array parameter per column through
// unnest(), which parses and plans in constant time whatever the row count (a VALUES list of
// thousands of tuples spends most of its time in the parser).
function insertText(table: string, columns: readonly string[], rows: number, postgres: boolean): string {
  if (postgres) {
    const arrays = columns.map((c, i) => `$${i + 1}::${INTEGER_COLUMNS.has(c) ? 'integer' : 'text'}[]`);
    return `insert into ${table} (${columns.join(',')}) select * from unnest(${arrays.join(',')})`;
  }
  const tuple = `(${columns.map(() => '?').join(',')})`;
  return `insert into ${table} (${columns.join(',')}) values ${Array.from({ length: rows }, () => tuple).join(',')}`;
}

function transpose(values: readonly (string | number | null)[], width: number): (string | number | null)[][] {
  const columns = Array.from({ length: width }, () => [] as (string | number | null)[]);
  for (let i = 0; i < values.length; i++) columns[i % width].push(values[i]);
  return columns;
}

class BulkInserter {
  private readonly texts = new Map<number, string>();
  values: (string | number | null)[] = [];

  constructor(
    private readonly conn: Kysely<any>,
    private readonly table: string,
    private readonly columns: readonly string[],
    private readonly maxRows: number,
    private readonly postgres: boolean,
  ) {}

  get rows() {
    return this.values.length / this.columns.length;
  }

  async flushIfFull() {
    if (this.rows >= this.maxRows) await this.flush();
  }

  async flush() {
    const width = this.columns.length;
    while (this.values.length) {
      const rows = Math.min(this.maxRows, this.values.length / width);
      const key = this.postgres ? 0 : rows;
      let text = this.texts.get(key);
      if (!text) this.texts.set(key, (text = insertText(this.table, this.columns, rows, this.postgres)));
      const params = this.values.length === rows * width ? this.values : this.values.slice(0, rows * width);
      await this.conn.executeQuery(CompiledQuery.raw(text, this.postgres ? transpose(params, width) : params));
      this.values = params === this.values ? [] : this.values.slice(rows * width);
    }
  }
}

export async function generateDemoData(db: DB, opts: DemoOptions): Promise<DemoResult> {
  const postgres = isPostgres(db);
  // SQLite's one connection gets a bigger page cache, for index builds (sorts) and the random
  // inserts into the email and phone indexes of an --append.
  if (!postgres) await sql`pragma cache_size = -1048576`.execute(db);
  // A load that died before putting its indexes and triggers back: put them back first.
  await putBack(db, opts.onBuild);
  const existing = Number(
    (
      await db
        .selectFrom('leads')
        .select((eb) => eb.fn.countAll<string | number>().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
  if (existing > 0 && !opts.append) {
    throw new DemoDataRefused(
      `The database already has ${existing.toLocaleString('en-US')} leads; pass --append to add more anyway.`,
    );
  }
  const { world, created } = await prepareWorld(db, opts.size);
  const rng = new Rng((opts.seed ?? 1) + existing);
  const endMs = (opts.now ?? new Date()).getTime();
  const startMs = endMs - (opts.days ?? 90) * 24 * HOUR_MS;
  const perHour = leadsPerHour(rng, opts.leads, startMs, endMs);
  const factory = new LeadFactory(rng, world, endMs);
  const fresh = existing === 0;
  if (fresh) await setAside(db);

  try {
    // SQLite checks no foreign key while rows go into a database that had no leads: the
    // generator makes every reference from the rows it made (a check per attempt costs 7 %).
    if (fresh && !postgres) await sql`pragma foreign_keys = off`.execute(db);
    await load(db, postgres, opts, { startMs, endMs, perHour, rng, factory });
  } finally {
    if (fresh && !postgres) await sql`pragma foreign_keys = on`.execute(db);
    // Also after a failure: the rows that went in are counted and indexed like any others.
    if (fresh) await putBack(db, opts.onBuild);
  }
  await analyze(db, postgres);

  return {
    leads: factory.leadCount,
    attempts: factory.attemptCount,
    partners: world.partners.length,
    campaigns: world.campaigns.length,
    configurationCreated: created,
    from: new Date(startMs).toISOString(),
    to: new Date(endMs).toISOString(),
  };
}

async function load(
  db: DB,
  postgres: boolean,
  opts: DemoOptions,
  {
    startMs,
    endMs,
    perHour,
    rng,
    factory,
  }: { startMs: number; endMs: number; perHour: number[]; rng: Rng; factory: LeadFactory },
) {
  await db.connection().execute(async (conn) => {
    // On PostgreSQL, commits that do not wait for the WAL flush.
    if (postgres) await sql`set synchronous_commit = off`.execute(conn);
    const leads = new BulkInserter(conn, 'leads', LEAD_COLUMNS, LEAD_ROWS, postgres);
    const attempts = new BulkInserter(conn, 'lead_attempts', ATTEMPT_COLUMNS, ATTEMPT_ROWS, postgres);
    let inTx = 0;
    await sql.raw('begin').execute(conn);
    try {
      for (let h = 0; h < perHour.length; h++) {
        const hourStart = startMs + h * HOUR_MS;
        const span = Math.min(HOUR_MS, endMs - hourStart);
        const times = Array.from({ length: perHour[h] }, () => hourStart + Math.floor(rng.next() * span)).sort(
          (a, b) => a - b,
        );
        for (const t of times) {
          factory.make(t, leads.values, attempts.values);
          if (leads.rows >= LEAD_ROWS) {
            // Attempts refer to their leads: the leads go first.
            await leads.flush();
            await attempts.flushIfFull();
            inTx += LEAD_ROWS;
            opts.onProgress?.(factory.leadCount, opts.leads);
            if (inTx >= COMMIT_EVERY) {
              await attempts.flush();
              await sql.raw('commit').execute(conn);
              await sql.raw('begin').execute(conn);
              inTx = 0;
            }
          }
        }
      }
      await leads.flush();
      await attempts.flush();
      await sql.raw('commit').execute(conn);
    } catch (err) {
      await sql
        .raw('rollback')
        .execute(conn)
        .catch(() => {});
      throw err;
    }
    opts.onProgress?.(factory.leadCount, opts.leads);
  });
}

/**
 * Fresh statistics, so the planner knows the new data (SQLite never gathers them by itself). On
 * PostgreSQL, VACUUM also marks the new pages all-visible, which index-only scans (the analytics
 * covering index) need; autovacuum would get there, but only later.
 */
async function analyze(db: DB, postgres: boolean) {
  if (postgres) {
    for (const table of ['leads', 'lead_attempts', 'lead_stats_hourly', 'lead_country_stats_hourly'])
      await sql.raw(`vacuum analyze ${table}`).execute(db);
  } else await sql.raw('analyze').execute(db);
}
