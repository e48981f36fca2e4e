// The portal's SQL (issue 27): a provider's leads and its statistics. Every query here is
// narrowed by the provider's DataScope (leadInScope), so no handler or use case filters rows;
// each walks the (traffic_provider_id, created_at, id) index.
import { sql, type Expression, type SqlBool } from 'kysely';
import type { DB } from '../../db/database.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import type { LeadStatus } from '../../db/tables.js';
import { bucketSelections, bucketStart, HOUR_BUCKET } from '../analytics/queries.js';
import { SUB_IDS, type SubId } from '../leads/search.js';

export interface PortalLeadFilter {
  from: string | null; // inclusive, ISO UTC
  to: string | null; // exclusive
  status: LeadStatus[];
  country: string[];
  campaign_id?: string;
  subIds: Partial<Record<SubId, string>>;
  q: string | null;
}

export type SortKey = { created_at: string; id: string };

const scoped = (scope: DataScope): Expression<SqlBool> => leadInScope(scope, 'l') ?? sql<SqlBool>`1 = 0`;

function leadRows(db: DB, scope: DataScope) {
  return db
    .selectFrom('leads as l')
    .leftJoin('campaigns as c', 'c.id', 'l.campaign_id')
    .where(scoped(scope))
    .select([
      'l.id',
      'l.created_at',
      'l.status',
      'l.reason',
      'l.country',
      'l.campaign_id',
      'c.name as campaign_name',
      'l.sub_id1',
      'l.sub_id2',
      'l.sub_id3',
      'l.sub_id4',
      'l.sub_id5',
      'l.sale_status',
      'l.ftd_at',
      'l.cost_cents',
      'l.email',
      'l.phone',
    ]);
}

/**
 * The ids of the provider's leads whose id or any sub id is exactly `text`: one indexed lookup
 * each (the primary key; leads_provider_sub_idN, migration 20261130T040000Z_portal_sub_ids), so
 * a search never walks the provider's leads to compare five columns. A UUID may be either: click
 * ids often are.
 */
function matchingIds(db: DB, scope: DataScope, text: string) {
  const inScope = leadInScope(scope, 's') ?? sql<SqlBool>`1 = 0`;
  const byId = db.selectFrom('leads as s').select('s.id').where(inScope).where('s.id', '=', text.toLowerCase());
  return SUB_IDS.reduce(
    (u, k) => u.unionAll(db.selectFrom('leads as s').select('s.id').where(inScope).where(`s.${k}`, '=', text)),
    byId,
  );
}

export type PortalLeadRow = Awaited<ReturnType<ReturnType<typeof leadRows>['execute']>>[number];

/** A page of the provider's leads, newest first, after `after` (keyset). */
export const findPortalLeads = (
  db: DB,
  scope: DataScope,
  f: PortalLeadFilter,
  after: SortKey | null,
  limit: number,
): Promise<PortalLeadRow[]> => portalLeadsQuery(db, scope, f, after, limit).execute();

export function portalLeadsQuery(db: DB, scope: DataScope, f: PortalLeadFilter, after: SortKey | null, limit: number) {
  let q = leadRows(db, scope);
  if (f.from) q = q.where('l.created_at', '>=', f.from);
  if (f.to) q = q.where('l.created_at', '<', f.to);
  if (f.status.length) q = q.where('l.status', 'in', f.status);
  if (f.country.length) q = q.where('l.country', 'in', f.country);
  if (f.campaign_id) q = q.where('l.campaign_id', '=', f.campaign_id);
  for (const [k, v] of Object.entries(f.subIds)) q = q.where(`l.${k as SubId}`, '=', v);
  if (f.q) q = q.where('l.id', 'in', matchingIds(db, scope, f.q));
  if (after)
    q = q.where((eb) =>
      eb.or([
        eb('l.created_at', '<', after.created_at),
        eb.and([eb('l.created_at', '=', after.created_at), eb('l.id', '<', after.id)]),
      ]),
    );
  return q.orderBy('l.created_at', 'desc').orderBy('l.id', 'desc').limit(limit);
}

/** One lead of the provider's, or undefined (another provider's lead reads as missing). */
export const findPortalLead = (db: DB, scope: DataScope, id: string) =>
  leadRows(db, scope).where('l.id', '=', id.toLowerCase()).executeTakeFirst();

/** The provider's campaigns whose payout is per FTD (CPA): their payout is earned by the FTD. */
export async function cpaCampaignIds(db: DB, trafficProviderId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('campaigns')
    .select(['id', 'payout'])
    .where('traffic_provider_id', '=', trafficProviderId)
    .execute();
  return rows.filter((r) => r.payout !== null && JSON.parse(r.payout).model === 'cpa').map((r) => r.id);
}

export interface StatsSpec {
  fromMs: number;
  toMs: number;
  /** FTDs at or before this instant (ISO) are visible; later ones are in their hold. */
  ftdCutoff: string;
  cpaCampaigns: string[];
  /** Time buckets (ms) to fold into local days, or a lead column to group by. */
  by: { bucketMs: number } | { column: 'campaign_id' | 'country' | SubId };
}

export interface StatsRow {
  bucket: number | null;
  key: string | null;
  leads: number;
  accepted: number;
  ftds: number;
  payoutCents: number;
}

const num = (v: unknown) => Number(v ?? 0); // PostgreSQL answers sums as text

const groupsOf = (s: StatsSpec) =>
  'bucketMs' in s.by ? bucketSelections('created_at', s.by.bucketMs) : [sql`${sql.ref(s.by.column)}`];

/**
 * Leads, accepted, visible FTDs and payout of the provider's leads created in [from, to), grouped:
 * by day, campaign or country an index-only scan of leads_provider_portal.
 */
export function statsQuery(db: DB, scope: DataScope, s: StatsSpec) {
  const iso = (ms: number) => new Date(ms).toISOString();
  const visible = sql`(ftd_at is not null and ftd_at <= ${s.ftdCutoff})`;
  // A CPA campaign's payout is earned by the FTD: while the FTD is in its hold, it earns nothing yet.
  const held = s.cpaCampaigns.length
    ? sql`(ftd_at is not null and ftd_at > ${s.ftdCutoff} and campaign_id in (${sql.join(s.cpaCampaigns)}))`
    : sql`1 = 0`;
  const groups = groupsOf(s);
  return db
    .selectFrom('leads as l')
    .where(scoped(scope))
    .where('created_at', '>=', iso(s.fromMs))
    .where('created_at', '<', iso(s.toMs))
    .select(groups.map((g, i) => g.as(`g${i}`)))
    .select([
      sql<number>`count(*)`.as('leads'),
      sql<number>`sum(case when status = 'delivered' then 1 else 0 end)`.as('accepted'),
      sql<number>`sum(case when ${visible} then 1 else 0 end)`.as('ftds'),
      sql<number>`sum(case when ${held} then 0 else cost_cents end)`.as('payout'),
    ])
    .groupBy(groups);
}

export async function statsRows(db: DB, scope: DataScope, s: StatsSpec): Promise<StatsRow[]> {
  if (rollupServes(scope, s)) return statsFromRollup(db, scope, s);
  const groups = groupsOf(s);
  const q = statsQuery(db, scope, s);
  const rows = (await q.execute()) as Record<string, unknown>[];
  return rows.map((r) => ({
    bucket: 'bucketMs' in s.by ? bucketStart(String(r.g0), groups.length > 1 ? num(r.g1) : null) : null,
    key: 'bucketMs' in s.by ? null : ((r.g0 as string | null) ?? null),
    leads: num(r.leads),
    accepted: num(r.accepted),
    ftds: num(r.ftds),
    payoutCents: num(r.payout),
  }));
}

/**
 * Whether lead_provider_stats_hourly can answer: by UTC hour over whole hours (zones with a
 * :30 or :45 offset cut hours: their leads are read), for a scope of providers alone (the
 * rollup's rows carry no partner).
 */
const rollupServes = (scope: DataScope, s: StatsSpec) =>
  'bucketMs' in s.by &&
  s.by.bucketMs === HOUR_BUCKET &&
  s.fromMs % HOUR_BUCKET === 0 &&
  s.toMs % HOUR_BUCKET === 0 &&
  scope.trafficProviderIds !== null &&
  scope.partnerIds === null;

/**
 * The provider's hours from its rollup (migration 20261130T050000Z_provider_rollup), less the FTDs
 * still in their hold and the CPA payout they would earn, read from the leads that have them
 * (leads_provider_ftd). One statement, so both parts see the same moment. The range is on the
 * hour text there: a range on created_at itself would lead the planners to walk the provider's
 * leads by leads_provider_portal instead.
 */
export function rollupStatement(scope: DataScope, s: StatsSpec) {
  const hour = (ms: number) => new Date(ms).toISOString().slice(0, 13);
  const heldPayout = s.cpaCampaigns.length
    ? sql`sum(case when l.campaign_id in (${sql.join(s.cpaCampaigns)}) then l.cost_cents else 0 end)`
    : sql`0`;
  return sql<{ hour: string; leads: unknown; accepted: unknown; ftds: unknown; payout: unknown }>`
    select r.hour as hour, r.n_leads as leads, r.n_delivered as accepted, r.n_ftd as ftds, r.cost_cents as payout
    from lead_provider_stats_hourly r
    where ${leadInScope(scope, 'r')} and r.hour >= ${hour(s.fromMs)} and r.hour < ${hour(s.toMs)}
    union all
    select substr(l.created_at, 1, 13), 0, 0, -count(*), -${heldPayout}
    from leads l
    where ${scoped(scope)} and l.ftd_at is not null and l.ftd_at > ${s.ftdCutoff}
      and substr(l.created_at, 1, 13) >= ${hour(s.fromMs)} and substr(l.created_at, 1, 13) < ${hour(s.toMs)}
    group by substr(l.created_at, 1, 13)`;
}

async function statsFromRollup(db: DB, scope: DataScope, s: StatsSpec): Promise<StatsRow[]> {
  const { rows } = await rollupStatement(scope, s).execute(db);
  const byHour = new Map<string, StatsRow>();
  for (const r of rows) {
    let row = byHour.get(r.hour);
    if (!row)
      byHour.set(
        r.hour,
        (row = { bucket: bucketStart(r.hour, null), key: null, leads: 0, accepted: 0, ftds: 0, payoutCents: 0 }),
      );
    row.leads += num(r.leads);
    row.accepted += num(r.accepted);
    row.ftds += num(r.ftds);
    row.payoutCents += num(r.payout);
  }
  return [...byHour.values()];
}

/** Names of the provider's campaigns (archived ones too) by id. */
export async function campaignNames(db: DB, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db.selectFrom('campaigns').select(['id', 'name']).where('id', 'in', ids).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}
