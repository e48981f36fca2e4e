// Summary and grouped report: SQL aggregates (queries.ts) folded into the caller's calendar.
import { sql } from 'kysely';
import { isPostgres, type DB } from '../../db/database.js';
import type { DataScope } from '../../db/scope.js';
import { invalid } from '../../http/errors.js';
import {
  aggregateRaw,
  aggregateRollup,
  entityNames,
  HOUR_BUCKET,
  type AggregateRow,
  type EntityColumn,
  type Filters,
  type Measures,
} from './queries.js';
import { resolveRange, type Range } from './range.js';
import { TIME_DIMENSIONS, type Dimension, type ReportQueryT, type SummaryQueryT } from './schemas.js';
import {
  dayGrid,
  dayIndex,
  dayKey,
  isoWeekKey,
  monthKey,
  periodGrid,
  weekSpan,
  type DayGrid,
  type DayNumber,
} from '../../time.js';

export const CURRENCY = 'USD';

const ENTITY_COLUMN: Record<Exclude<Dimension, 'day' | 'week' | 'month'>, EntityColumn> = {
  partner: 'partner_id',
  traffic_provider: 'traffic_provider_id',
  campaign: 'campaign_id',
  flow: 'flow_id',
  country: 'country',
};

const NONE_LABEL: Record<EntityColumn, string> = {
  partner_id: 'Not taken by a partner',
  traffic_provider_id: 'No traffic provider',
  campaign_id: 'No campaign',
  flow_id: 'No flow',
  country: 'Unknown country',
};

type Acc = Measures;

const zero = (): Acc => ({
  leads: 0,
  delivered: 0,
  rejected: 0,
  duplicates: 0,
  failed: 0,
  ftds: 0,
  costCents: 0,
  revenueCents: 0,
  flagged: 0,
});

/** Adds a row's measures; `part` picks what a query contributes in ftd mode. */
function add(acc: Acc, r: AggregateRow, part: 'all' | 'volume' | 'ftd') {
  if (part !== 'ftd') {
    acc.leads += r.leads;
    acc.delivered += r.delivered;
    acc.rejected += r.rejected;
    acc.duplicates += r.duplicates;
    acc.failed += r.failed;
    acc.costCents += r.costCents;
    acc.flagged += r.flagged;
  }
  // In ftd mode the created_at pass brings the revenue of leads without an FTD; the ftd_at pass
  // the FTDs and their revenue.
  if (part !== 'volume') acc.ftds += r.ftds;
  acc.revenueCents += r.revenueCents;
}

export function measures(a: Acc) {
  return {
    leads: a.leads,
    delivered: a.delivered,
    rejected: a.rejected,
    duplicates: a.duplicates,
    failed: a.failed,
    ftds: a.ftds,
    conversion_rate: a.delivered ? a.ftds / a.delivered : 0,
    flagged: a.flagged,
    flagged_rate: a.leads ? a.flagged / a.leads : 0,
    revenue: a.revenueCents / 100,
    cost: a.costCents / 100,
    profit: (a.revenueCents - a.costCents) / 100,
  };
}

function filtersOf(q: SummaryQueryT): Filters {
  return {
    partner_id: q.partner_id,
    traffic_provider_id: q.traffic_provider_id,
    campaign_id: q.campaign_id,
    flow_id: q.flow_id,
    country: q.country,
  };
}

const HOUR = HOUR_BUCKET;

interface Plan {
  /** Whole UTC hours read from the rollups, minus skipHours. */
  rollup: { fromMs: number; toMs: number; skipHours: number[] } | null;
  /** Everything else, read from leads: partial hours at the ends, and hours holding a local midnight that is not on the hour. */
  raw: [number, number][];
}

export function planRange(range: Range, grid: DayGrid | null): Plan {
  const a = Math.ceil(range.fromMs / HOUR) * HOUR;
  const b = Math.floor(range.toMs / HOUR) * HOUR;
  if (a >= b) return { rollup: null, raw: [[range.fromMs, range.toMs]] };
  const raw: [number, number][] = [];
  if (range.fromMs < a) raw.push([range.fromMs, a]);
  if (b < range.toMs) raw.push([b, range.toMs]);
  const skipHours: number[] = [];
  if (grid && grid.bucketMs < HOUR) {
    for (const start of grid.starts) {
      const h = Math.floor(start / HOUR) * HOUR;
      if (start % HOUR !== 0 && h >= a && h < b && skipHours.at(-1) !== h) skipHours.push(h);
    }
  }
  for (const h of skipHours) raw.push([h, h + HOUR]);
  return { rollup: { fromMs: a, toMs: b, skipHours }, raw };
}

/** Runs the aggregates a request needs: ftd mode adds a second pass over ftd_at. */
async function collect(
  db: DB,
  range: Range,
  q: SummaryQueryT,
  entities: EntityColumn[],
  grid: DayGrid | null,
  scope: DataScope,
) {
  const plan = planRange(range, grid);
  const ftd = q.date_type === 'ftd';
  const run = async (conn: DB) => {
    const out: { row: AggregateRow; part: 'all' | 'volume' | 'ftd' }[] = [];
    for (const column of ftd ? (['created_at', 'ftd_at'] as const) : (['created_at'] as const)) {
      const common = {
        column,
        filters: filtersOf(q),
        scope,
        entities,
        revenueWithoutFtd: ftd && column === 'created_at',
      };
      const part = !ftd ? 'all' : column === 'created_at' ? 'volume' : 'ftd';
      const rows = [
        ...(plan.rollup
          ? await aggregateRollup(conn, { ...common, ...plan.rollup, bucketStarts: grid?.starts ?? null })
          : []),
        ...(plan.raw.length
          ? await aggregateRaw(conn, { ...common, segments: plan.raw, bucketMs: grid?.bucketMs ?? null })
          : []),
      ];
      for (const row of rows) out.push({ row, part });
    }
    return out;
  };
  if (!isPostgres(db)) return run(db);
  // A long report groups tens of thousands of (hour, entity) rows: with the default 4 MB of
  // work_mem PostgreSQL sorts them on disk instead of hashing them in memory.
  return db.transaction().execute(async (tx) => {
    await sql`set local work_mem = '32MB'`.execute(tx);
    return run(tx);
  });
}

function rangeFields(range: Range, dateType: 'registration' | 'ftd') {
  return {
    from: new Date(range.fromMs).toISOString(),
    to: new Date(range.toMs).toISOString(),
    timezone: range.tz,
    date_type: dateType,
    currency: CURRENCY,
  };
}

export async function summary(db: DB, q: SummaryQueryT, operatorTz: string, scope: DataScope) {
  const range = resolveRange(q, operatorTz);
  const totals = zero();
  for (const { row, part } of await collect(db, range, q, [], null, scope)) add(totals, row, part);
  return { ...rangeFields(range, q.date_type), totals: measures(totals) };
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function periodKey(dim: Dimension, day: DayNumber): string {
  return dim === 'day' ? dayKey(day) : dim === 'week' ? isoWeekKey(day) : monthKey(day);
}

function periodLabel(dim: Dimension, day: DayNumber): string {
  if (dim === 'day') return dayKey(day);
  if (dim === 'week') {
    const [monday, sunday] = weekSpan(day);
    return `${isoWeekKey(day)} (${dayKey(monday)} – ${dayKey(sunday)})`;
  }
  return `${MONTHS[(Math.floor(day / 100) % 100) - 1]} ${Math.floor(day / 10_000)}`;
}

let regionNames: Intl.DisplayNames | null = null;
export function countryName(code: string): string {
  try {
    regionNames ??= new Intl.DisplayNames(['en'], { type: 'region' });
    return regionNames.of(code) ?? code;
  } catch {
    return code; // not a region code the runtime knows
  }
}

interface Group {
  key: string | null;
  acc: Acc;
  /** A day inside the period (time groups), for the label. */
  day?: DayNumber;
  children?: Map<string | null, Group>;
}

export async function report(db: DB, q: ReportQueryT, operatorTz: string, scope: DataScope) {
  if (q.then_by !== undefined && q.then_by === q.group_by)
    invalid([{ field: 'then_by', message: 'must differ from group_by' }]);
  const range = resolveRange(q, operatorTz);
  const levels: Dimension[] = q.then_by ? [q.group_by, q.then_by] : [q.group_by];
  const entities = [
    ...new Set(
      levels.filter((d) => !TIME_DIMENSIONS.has(d)).map((d) => ENTITY_COLUMN[d as keyof typeof ENTITY_COLUMN]),
    ),
  ];
  // By week or month alone, the rollups are summed per period, not per day (a twelfth of the rows
  // for 90 days by week), and a period's whole UTC days are read from the daily rollup.
  const times = levels.filter((d) => TIME_DIMENSIONS.has(d));
  const days = times.length ? dayGrid(range.tz, range.fromMs, range.toMs) : null;
  const grid =
    days && !times.includes('day') ? periodGrid(days, (day) => times.map((d) => periodKey(d, day)).join()) : days;

  const totals = zero();
  const top = new Map<string | null, Group>();
  const dayOfBucket = new Map<number, DayNumber>();
  const keyOf = (dim: Dimension, row: AggregateRow): { key: string | null; day?: DayNumber } => {
    if (!TIME_DIMENSIONS.has(dim))
      return { key: row.entities[entities.indexOf(ENTITY_COLUMN[dim as keyof typeof ENTITY_COLUMN])] };
    let day = dayOfBucket.get(row.bucket!);
    if (day === undefined) dayOfBucket.set(row.bucket!, (day = grid!.days[dayIndex(grid!, row.bucket!)]));
    return { key: periodKey(dim, day), day };
  };
  const groupIn = (
    map: Map<string | null, Group>,
    k: { key: string | null; day?: DayNumber },
    nested: boolean,
  ): Group => {
    let g = map.get(k.key);
    if (!g) map.set(k.key, (g = { key: k.key, acc: zero(), day: k.day, ...(nested ? { children: new Map() } : {}) }));
    return g;
  };

  for (const { row, part } of await collect(db, range, q, entities, grid, scope)) {
    add(totals, row, part);
    const g = groupIn(top, keyOf(levels[0], row), levels.length > 1);
    add(g.acc, row, part);
    if (levels.length > 1) add(groupIn(g.children!, keyOf(levels[1], row), false).acc, row, part);
  }
  // Charts want every period of the range, empty ones too.
  if (TIME_DIMENSIONS.has(q.group_by))
    for (const day of grid!.days) groupIn(top, { key: periodKey(q.group_by, day), day }, levels.length > 1);

  const labels = new Map<Dimension, (g: Group) => string>();
  for (const dim of levels) {
    if (TIME_DIMENSIONS.has(dim)) labels.set(dim, (g) => periodLabel(dim, g.day!));
    else {
      const column = ENTITY_COLUMN[dim as keyof typeof ENTITY_COLUMN];
      const keys = new Set<string>();
      for (const g of top.values()) {
        if (dim === levels[0] && g.key !== null) keys.add(g.key);
        if (dim === levels[1]) for (const c of g.children!.values()) if (c.key !== null) keys.add(c.key);
      }
      const names = column === 'country' ? null : await entityNames(db, column, [...keys]);
      labels.set(dim, (g) =>
        g.key === null ? NONE_LABEL[column] : names ? (names.get(g.key) ?? g.key) : countryName(g.key),
      );
    }
  }

  const ordered = (dim: Dimension, groups: Iterable<Group>) => {
    const label = labels.get(dim)!;
    const list = [...groups].map((g) => ({ g, label: label(g) }));
    if (TIME_DIMENSIONS.has(dim)) return list.sort((a, b) => (a.g.key! < b.g.key! ? -1 : a.g.key! > b.g.key! ? 1 : 0));
    return list.sort(
      (a, b) =>
        b.g.acc.leads - a.g.acc.leads ||
        a.label.localeCompare(b.label) ||
        String(a.g.key).localeCompare(String(b.g.key)),
    );
  };
  const rows = ordered(levels[0], top.values()).map(({ g, label }) => ({
    key: g.key,
    label,
    ...measures(g.acc),
    ...(g.children
      ? {
          children: ordered(levels[1], g.children.values()).map((c) => ({
            key: c.g.key,
            label: c.label,
            ...measures(c.g.acc),
          })),
        }
      : {}),
  }));

  return {
    ...rangeFields(range, q.date_type),
    group_by: q.group_by,
    then_by: q.then_by ?? null,
    totals: measures(totals),
    rows,
  };
}
