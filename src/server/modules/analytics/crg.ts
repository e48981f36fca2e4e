// The CRG report: for each partner whose CPL deal carried a conversion-rate guarantee, per
// period of its deal (calendar week or month in the report's time zone), the leads delivered
// under the guarantee, how many of those leads made an FTD (whenever it came), the rate
// promised (as recorded on each lead at delivery) and reached, and the shortfall: the FTDs
// missing, and what they are worth, revenue × missing / expected (the part of the CPL revenue
// the guarantee did not earn). A period that has not ended yet (the running month or week, in the
// report's zone) is `running`: its numbers are so far, and it cannot be short yet.
import { sql } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../../db/database.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import { parsePrice } from '../../distribution/prices.js';
import { dayGrid, dayIndex, isoWeekKey, localDay, monthKey } from '../../time.js';
import { bucketSelections, bucketStart } from './queries.js';
import { resolveRange } from './range.js';
import { AnalyticsQuery } from './schemas.js';
import { CURRENCY } from './service.js';

export const CrgQuery = Type.Object(
  {
    date_from: AnalyticsQuery.date_from,
    date_to: AnalyticsQuery.date_to,
    timezone: AnalyticsQuery.timezone,
    partner_id: AnalyticsQuery.partner_id,
  },
  { additionalProperties: false },
);

const Money = (description: string) => Type.Number({ description: `${description}, in \`currency\`` });
export const CrgReport = Type.Object(
  {
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    timezone: Type.String(),
    currency: Type.String(),
    rows: Type.Array(
      Type.Object(
        {
          partner_id: Type.String(),
          partner_name: Type.String(),
          period: Type.String({
            description:
              'Month YYYY-MM or ISO week YYYY-Www (the deal’s CRG period), by the day each lead was delivered',
          }),
          promised_rate: Type.Number({ description: 'Percent, as recorded on the leads when they were delivered' }),
          leads: Type.Integer({ description: 'Leads delivered under the guarantee in the period (and in the range)' }),
          ftds: Type.Integer({ description: 'Those leads that made an FTD, whenever' }),
          actual_rate: Type.Number({ description: 'Percent, ftds / leads' }),
          expected_ftds: Type.Number({ description: 'leads × promised rate' }),
          shortfall_ftds: Type.Number({ description: 'FTDs missing to meet the promise (0 when met)' }),
          revenue: Money('What the partner paid for these leads (CPL, as recorded)'),
          shortfall_amount: Money('revenue × shortfall_ftds / expected_ftds: the revenue the guarantee did not earn'),
          met: Type.Boolean({ description: 'The promise is met (so far, while the period is running)' }),
          running: Type.Boolean({
            description:
              'The period has not ended yet (it holds today, in the report’s time zone): the numbers are so far, and a ' +
              'shortfall is not final',
          }),
        },
        { title: 'CrgRow' },
      ),
      { description: 'By partner name, then period, then rate' },
    ),
  },
  { title: 'CrgReport' },
);
export type CrgQueryT = Static<typeof CrgQuery>;

const round2 = (n: number) => Math.round(n * 100) / 100;

export async function crgReport(db: DB, q: CrgQueryT, operatorTz: string, scope: DataScope, nowMs = Date.now()) {
  const range = resolveRange(q, operatorTz, nowMs);
  const today = localDay(range.tz, nowMs);
  const grid = dayGrid(range.tz, range.fromMs, range.toMs);
  // Per UTC bucket that never straddles a local midnight (the report's own), folded into local days here.
  const buckets = bucketSelections('delivered_at', grid.bucketMs);
  let query = db
    .selectFrom('leads')
    .select(['partner_id', 'crg_bp'])
    .select(buckets.map((b, i) => b.as(`b${i}`)))
    .select([
      sql<number>`count(*)`.as('leads'),
      sql<number>`sum(case when ftd_at is not null then 1 else 0 end)`.as('ftds'),
      sql<number>`sum(revenue_cents)`.as('revenue'),
    ])
    .where('crg_bp', 'is not', null)
    .where('status', '=', 'delivered')
    .where('delivered_at', '>=', new Date(range.fromMs).toISOString())
    .where('delivered_at', '<', new Date(range.toMs).toISOString())
    .groupBy(['partner_id', 'crg_bp', ...buckets]);
  if (q.partner_id?.length) query = query.where('partner_id', 'in', q.partner_id);
  const inScope = leadInScope(scope);
  if (inScope) query = query.where(inScope);
  const rows = (await query.execute()) as unknown as {
    partner_id: string;
    crg_bp: number;
    b0: string;
    b1?: number;
    leads: number;
    ftds: number;
    revenue: number;
  }[];

  // The partners' names, and their deals' CRG periods now.
  const partnerIds = [...new Set(rows.map((r) => r.partner_id))];
  const partners = new Map(
    partnerIds.length
      ? (await db.selectFrom('partners').select(['id', 'name', 'deal']).where('id', 'in', partnerIds).execute()).map(
          (p) => [p.id, { name: p.name, deal: parsePrice(p.deal) }],
        )
      : [],
  );
  const groups = new Map<
    string,
    {
      partner_id: string;
      period: string;
      running: boolean;
      bp: number;
      leads: number;
      ftds: number;
      revenueCents: number;
    }
  >();
  for (const r of rows) {
    const ms = bucketStart(String(r.b0), buckets.length > 1 ? Number(r.b1) : null);
    const day = grid.days[dayIndex(grid, ms)];
    const periodOf = partners.get(r.partner_id)?.deal?.crg?.period === 'week' ? isoWeekKey : monthKey;
    const period = periodOf(day);
    const key = `${r.partner_id}\n${period}\n${r.crg_bp}`;
    const g = groups.get(key) ?? {
      partner_id: r.partner_id,
      period,
      running: period >= periodOf(today), // both keys sort as text: YYYY-MM, YYYY-Www
      bp: Number(r.crg_bp),
      leads: 0,
      ftds: 0,
      revenueCents: 0,
    };
    g.leads += Number(r.leads);
    g.ftds += Number(r.ftds);
    g.revenueCents += Number(r.revenue);
    groups.set(key, g);
  }
  const out = [...groups.values()].map((g) => {
    const expected = (g.leads * g.bp) / 10_000;
    const shortfall = Math.max(0, expected - g.ftds);
    return {
      partner_id: g.partner_id,
      partner_name: partners.get(g.partner_id)?.name ?? g.partner_id,
      period: g.period,
      promised_rate: g.bp / 100,
      leads: g.leads,
      ftds: g.ftds,
      actual_rate: g.leads ? round2((g.ftds / g.leads) * 100) : 0,
      expected_ftds: round2(expected),
      shortfall_ftds: round2(shortfall),
      revenue: g.revenueCents / 100,
      shortfall_amount: expected > 0 ? Math.round((g.revenueCents * shortfall) / expected) / 100 : 0,
      met: shortfall === 0,
      running: g.running,
    };
  });
  out.sort(
    (a, b) =>
      a.partner_name.localeCompare(b.partner_name) ||
      a.partner_id.localeCompare(b.partner_id) ||
      a.period.localeCompare(b.period) ||
      a.promised_rate - b.promised_rate,
  );
  return {
    from: new Date(range.fromMs).toISOString(),
    to: new Date(range.toMs).toISOString(),
    timezone: range.tz,
    currency: CURRENCY,
    rows: out,
  };
}
