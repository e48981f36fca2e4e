// The portal's statistics (issue 27): a provider's leads by day, week, month (in the user's time
// zone), campaign, country or sub id value: leads, accepted, FTDs (confirmed ones only: after the
// hold), conversion rate (FTDs / leads) and payout (when shown). Counted by the day each lead
// arrived, from the provider's own leads in the range (its index bounds the read), so a lead's
// FTD counts in the row of the day it came in.
import type { DB } from '../../db/database.js';
import { csvCell } from '../../http/csv.js';
import { dayGrid, dayIndex, dayKey, isoWeekKey, monthKey, weekSpan, type DayNumber } from '../../time.js';
import { resolveRange } from '../analytics/range.js';
import { CURRENCY, countryName } from '../analytics/service.js';
import { providerOf, type Actor } from '../audit/service.js';
import { campaignNames, statsRows, type StatsRow } from './leads-queries.js';
import { ftdCutoff, viewOf, zoneOf } from './leads.js';
import type { StatGroup } from './leads-schemas.js';

const TIME = new Set<StatGroup>(['day', 'week', 'month']);
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

function periodOf(g: StatGroup, day: DayNumber): { key: string; label: string } {
  if (g === 'day') return { key: dayKey(day), label: dayKey(day) };
  if (g === 'week') {
    const [monday, sunday] = weekSpan(day);
    return { key: isoWeekKey(day), label: `${isoWeekKey(day)} (${dayKey(monday)} – ${dayKey(sunday)})` };
  }
  return { key: monthKey(day), label: `${MONTHS[(Math.floor(day / 100) % 100) - 1]} ${Math.floor(day / 10_000)}` };
}

interface Acc {
  leads: number;
  accepted: number;
  ftds: number;
  payoutCents: number;
}
const zero = (): Acc => ({ leads: 0, accepted: 0, ftds: 0, payoutCents: 0 });
const add = (a: Acc, r: Acc) => {
  a.leads += r.leads;
  a.accepted += r.accepted;
  a.ftds += r.ftds;
  a.payoutCents += r.payoutCents;
};

export async function portalStats(
  db: DB,
  actor: Actor,
  q: { group_by: StatGroup; date_from?: string; date_to?: string },
  nowMs = Date.now(),
) {
  const p = providerOf(actor);
  const range = resolveRange({ date_from: q.date_from, date_to: q.date_to }, zoneOf(p.user.timezone), nowMs);
  const view = await viewOf(db, p.trafficProviderId, nowMs);
  const time = TIME.has(q.group_by);
  const grid = time ? dayGrid(range.tz, range.fromMs, range.toMs) : null;
  const column = q.group_by === 'campaign' ? 'campaign_id' : q.group_by;
  const rows: StatsRow[] = await statsRows(db, p.scope, {
    fromMs: range.fromMs,
    toMs: range.toMs,
    ftdCutoff: ftdCutoff(view),
    cpaCampaigns: [...view.cpaCampaigns],
    by: grid ? { bucketMs: grid.bucketMs } : { column: column as Exclude<typeof column, 'day' | 'week' | 'month'> },
  });

  const groups = new Map<string | null, { key: string | null; label: string; acc: Acc }>();
  const group = (key: string | null, label: string) => {
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, label, acc: zero() }));
    return g;
  };
  // Every period of the range has a row, with or without leads.
  if (grid) for (const day of grid.days) group(periodOf(q.group_by, day).key, periodOf(q.group_by, day).label);
  const names =
    q.group_by === 'campaign'
      ? await campaignNames(
          db,
          rows.flatMap((r) => (r.key ? [r.key] : [])),
        )
      : null;
  for (const r of rows) {
    if (grid) {
      const { key, label } = periodOf(q.group_by, grid.days[dayIndex(grid, r.bucket!)]);
      add(group(key, label).acc, r);
    } else {
      const label =
        r.key === null
          ? q.group_by === 'campaign'
            ? '(no campaign)'
            : '(none)'
          : names
            ? (names.get(r.key) ?? r.key)
            : q.group_by === 'country'
              ? `${countryName(r.key)} (${r.key})`
              : r.key;
      add(group(r.key, label).acc, r);
    }
  }
  const show = view.settings.show_payout;
  const measures = (a: Acc) => ({
    leads: a.leads,
    accepted: a.accepted,
    ftds: a.ftds,
    conversion_rate: a.leads ? Math.round((a.ftds / a.leads) * 10_000) / 10_000 : 0,
    payout_cents: show ? a.payoutCents : null,
    currency: show ? CURRENCY : null,
  });
  const list = [...groups.values()];
  // Most leads first; ties by key, the rows without a value last.
  const byKey = (a: string | null, b: string | null) => (a === null ? 1 : b === null ? -1 : a.localeCompare(b));
  if (!time) list.sort((a, b) => b.acc.leads - a.acc.leads || byKey(a.key, b.key));
  const totals = zero();
  for (const g of list) add(totals, g.acc);
  return {
    timezone: range.tz,
    group_by: q.group_by,
    date_from: new Date(range.fromMs).toISOString(),
    date_to: new Date(range.toMs).toISOString(),
    ftd_hold_hours: view.settings.ftd_hold_hours,
    rows: list.map((g) => ({ key: g.key, label: g.label, ...measures(g.acc) })),
    totals: measures(totals),
  };
}

export type PortalStatsT = Awaited<ReturnType<typeof portalStats>>;

const STAT_COLUMNS = ['leads', 'accepted', 'ftds', 'conversion_rate', 'payout_cents', 'currency'] as const;

/** The statistics as CSV: the grouping (label, key), the measures; detail rows only (no Total row). */
export function statsCsv(s: PortalStatsT): string {
  let out = [s.group_by, `${s.group_by}_key`, ...STAT_COLUMNS].join(',') + '\r\n';
  for (const r of s.rows) out += [r.label, r.key, ...STAT_COLUMNS.map((c) => r[c])].map(csvCell).join(',') + '\r\n';
  return out;
}

export function statsFileName(s: PortalStatsT): string {
  const day = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: s.timezone }).format(new Date(ms));
  return `stats-${s.group_by}-${day(Date.parse(s.date_from))}-to-${day(Date.parse(s.date_to) - 1)}.csv`;
}
