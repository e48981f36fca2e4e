// Rows written straight into the database, for tests of read paths (search, analytics) that
// need data before the intake API exists or in quantities the API would make slow.
import assert from 'node:assert/strict';
import type { Insertable } from 'kysely';
import { hashSecret } from '../src/server/auth/credentials.js';
import type { DB } from '../src/server/db/database.js';
import { newId, nowIso } from '../src/server/db/ids.js';
import type { LeadAttemptsTable, LeadsTable } from '../src/server/db/tables.js';

let n = 0;
const next = () => `${process.pid}${++n}`;

export async function insertPartner(
  db: DB,
  over: Partial<{ name: string; status: 'active' | 'paused'; countries: string[] }> = {},
) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('partners')
    .values({
      id,
      name: over.name ?? `Partner ${next()}`,
      status: over.status ?? 'active',
      countries: JSON.stringify(over.countries ?? []),
      working_hours: null,
      daily_cap: null,
      total_cap: null,
      integration: JSON.stringify({
        method: 'POST',
        url: 'http://127.0.0.1:9/leads',
        headers: {},
        body_template: { email: '{{lead.email}}' },
        success_path: 'success',
        lead_id_path: 'id',
        autologin_path: 'url',
        timeout_ms: 5000,
      }),
      postback_token_id: newId().replace(/-/g, '').slice(-12), // random: padded counters collided (1 vs 10)
      postback_token_hash: hashSecret(next()),
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  return id;
}

export async function insertTrafficProvider(db: DB, over: Partial<{ name: string }> = {}) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('traffic_providers')
    .values({
      id,
      name: over.name ?? `Provider ${next()}`,
      status: 'active',
      token_id: newId().replace(/-/g, '').slice(-12), // random: padded counters collided (1 vs 10)
      token_hash: hashSecret(next()),
      allowed_ips: '[]',
      duplicate_policy: JSON.stringify({ fields: ['email'], window_hours: 720, scope: 'provider' }),
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  return id;
}

export async function insertFlow(db: DB, partnerIds: string[] = [], over: Partial<{ name: string }> = {}) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('flows')
    .values({
      id,
      name: over.name ?? `Flow ${next()}`,
      status: 'active',
      max_attempts: 3,
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  for (const [i, partner_id] of partnerIds.entries()) {
    await db
      .insertInto('flow_targets')
      .values({
        id: newId(),
        flow_id: id,
        partner_id,
        position: i,
        priority: i + 1,
        weight: 100,
        daily_cap: null,
        countries: '[]',
        schedule: null,
      })
      .execute();
  }
  return id;
}

export async function insertCampaign(
  db: DB,
  traffic_provider_id: string,
  flow_id: string | null,
  over: Partial<{ name: string }> = {},
) {
  const id = newId();
  const now = nowIso();
  await db
    .insertInto('campaigns')
    .values({
      id,
      name: over.name ?? `Campaign ${next()}`,
      status: 'active',
      traffic_provider_id,
      flow_id,
      countries: '[]',
      payout: JSON.stringify({ model: 'cpl', amount_cents: 1000, currency: 'USD' }),
      created_at: now,
      updated_at: now,
      archived_at: null,
    })
    .execute();
  return id;
}

export type LeadInput = Partial<Insertable<LeadsTable>> & { traffic_provider_id: string };

export function leadRow(over: LeadInput): Insertable<LeadsTable> {
  const k = next();
  const created_at = over.created_at ?? nowIso();
  return {
    id: newId(),
    created_at,
    first_name: 'Ada',
    last_name: `Lovelace${k}`,
    email: `lead${k}@example.test`,
    phone: `+4915${k.padStart(9, '0').slice(-9)}`,
    country: 'DE',
    ip: '203.0.113.7',
    language: null,
    funnel: null,
    sub_id1: null,
    sub_id2: null,
    sub_id3: null,
    sub_id4: null,
    sub_id5: null,
    campaign_id: null,
    flow_id: null,
    partner_id: null,
    status: 'new',
    reason: null,
    partner_lead_id: null,
    sale_status: null,
    autologin_url: null,
    delivered_at: null,
    ftd_at: null,
    status_updated_at: created_at,
    cost_cents: 0,
    revenue_cents: 0,
    ...over,
  };
}

/** Inserts leads (in chunks) and returns their ids in order. */
export async function insertLeads(db: DB, leads: LeadInput[]): Promise<string[]> {
  const rows = leads.map(leadRow);
  for (let i = 0; i < rows.length; i += 200)
    await db
      .insertInto('leads')
      .values(rows.slice(i, i + 200))
      .execute();
  return rows.map((r) => r.id);
}

export async function insertAttempt(
  db: DB,
  a: Partial<Insertable<LeadAttemptsTable>> & { lead_id: string; partner_id: string; attempt_no: number },
) {
  const id = newId();
  await db
    .insertInto('lead_attempts')
    .values({
      id,
      requested_at: nowIso(),
      duration_ms: 120,
      http_status: 200,
      outcome: 'accepted',
      reason: null,
      response_excerpt: '{"success":true}',
      ...a,
    })
    .execute();
  return id;
}

/**
 * A small, named configuration for lead read-path tests: two providers, two partners, a flow
 * with both partners, and a campaign per provider (the first on the flow).
 */
export async function insertLeadWorld(db: DB) {
  const providerA = await insertTrafficProvider(db, { name: 'Provider A' });
  const providerB = await insertTrafficProvider(db, { name: 'Provider B' });
  const partnerA = await insertPartner(db, { name: 'Partner A' });
  const partnerB = await insertPartner(db, { name: 'Partner B' });
  const flow = await insertFlow(db, [partnerA, partnerB], { name: 'Flow A' });
  const campaignA = await insertCampaign(db, providerA, flow, { name: 'Campaign A' });
  const campaignB = await insertCampaign(db, providerB, null, { name: 'Campaign B' });
  return { providerA, providerB, partnerA, partnerB, flow, campaignA, campaignB };
}

// ---- Analytics ------------------------------------------------------------------------------
// A small world and 170 leads with every status, FTDs, cost and revenue, and the independent
// arithmetic analytics tests hold the API against: local days with Intl's en-CA formatting,
// ISO weeks with the textbook algorithm, sums straight over the rows — never the code under test.

export interface AnalyticsWorld {
  p1: string;
  p2: string;
  t1: string;
  t2: string;
  f1: string;
  f2: string;
  c1: string;
  c2: string;
  c3: string;
}

/** Partners Apex and Blue, providers Traffic One/Two, flows Flow One/Two, campaigns Camp One/Two/Three (Three has no flow). */
export async function insertAnalyticsWorld(db: DB): Promise<AnalyticsWorld> {
  const p1 = await insertPartner(db, { name: 'Apex' });
  const p2 = await insertPartner(db, { name: 'Blue' });
  const t1 = await insertTrafficProvider(db, { name: 'Traffic One' });
  const t2 = await insertTrafficProvider(db, { name: 'Traffic Two' });
  const f1 = await insertFlow(db, [p1, p2], { name: 'Flow One' });
  const f2 = await insertFlow(db, [p2], { name: 'Flow Two' });
  const c1 = await insertCampaign(db, t1, f1, { name: 'Camp One' });
  const c2 = await insertCampaign(db, t2, f2, { name: 'Camp Two' });
  const c3 = await insertCampaign(db, t1, null, { name: 'Camp Three' });
  return { p1, p2, t1, t2, f1, f2, c1, c2, c3 };
}

const ANALYTICS_STATUS_CYCLE = [
  'delivered',
  'delivered',
  'rejected',
  'delivered',
  'duplicate',
  'failed',
  'delivered',
  'pending',
  'new',
] as const;

/** 170 leads, one every 5 h 17 min from 2026-02-27T00:00Z on (across Berlin's DST change of 2026-03-29). */
export function analyticsDataset(w: AnalyticsWorld): LeadInput[] {
  const HOUR = 3_600_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const rows: LeadInput[] = [];
  for (let i = 0; i < 170; i++) {
    const created = Date.UTC(2026, 1, 27) + i * 317 * 60_000;
    const status = ANALYTICS_STATUS_CYCLE[i % 9];
    const campaign = [w.c1, w.c2, w.c3, null][i % 4];
    const provider = campaign === w.c1 || campaign === w.c3 ? w.t1 : w.t2;
    const flow = campaign === w.c1 ? w.f1 : campaign === w.c2 ? w.f2 : null;
    const routed = status === 'delivered' || status === 'rejected' || status === 'failed';
    const partner = routed ? [w.p1, w.p2][(i * 7) % 2] : null;
    const ftd = status === 'delivered' && i % 5 < 2 ? created + (i % 7) * 20 * HOUR + 17 * 60_000 : null;
    rows.push({
      created_at: iso(created),
      status,
      traffic_provider_id: provider,
      campaign_id: campaign,
      flow_id: flow,
      partner_id: partner,
      country: ['DE', 'FR', 'GB'][(i * 5) % 3],
      delivered_at: status === 'delivered' ? iso(created + 2000) : null,
      ftd_at: ftd === null ? null : iso(ftd),
      cost_cents: status === 'delivered' ? 1000 + (i % 3) * 250 : 0,
      revenue_cents: ftd !== null ? 50_000 + i : status === 'delivered' && partner === w.p2 ? 2_550 : 0,
      // Fraud flags on about one lead in five, one flag or two, of every status.
      flags: i % 5 === 1 ? 1 << (i % 7) : i % 13 === 0 ? 0b101 : 0,
    });
  }
  return rows;
}

const analyticsDayFormats = new Map<string, Intl.DateTimeFormat>();
/** The calendar day ("2026-03-01") of an instant in a zone. */
export function localDate(ms: number, timeZone: string): string {
  let f = analyticsDayFormats.get(timeZone);
  if (!f)
    analyticsDayFormats.set(
      timeZone,
      (f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })),
    );
  return f.format(new Date(ms));
}

/** ISO 8601 week of a day: "2026-W10". */
export function isoWeek(ymd: string): string {
  const d = new Date(`${ymd}T00:00:00Z`);
  const day = d.getUTCDay() || 7;
  d.setUTCDate(d.getUTCDate() + 4 - day); // the Thursday of the week decides its year
  const yearStart = Date.UTC(d.getUTCFullYear(), 0, 1);
  const week = Math.ceil(((d.getTime() - yearStart) / 86_400_000 + 1) / 7);
  return `${d.getUTCFullYear()}-W${String(week).padStart(2, '0')}`;
}

interface AnalyticsSums {
  leads: number;
  delivered: number;
  rejected: number;
  duplicates: number;
  failed: number;
  ftds: number;
  cost: number;
  revenue: number;
  flagged: number;
}

/** The measures the analytics API answers, from sums in cents. */
export function analyticsMeasures(
  m: AnalyticsSums = {
    leads: 0,
    delivered: 0,
    rejected: 0,
    duplicates: 0,
    failed: 0,
    ftds: 0,
    cost: 0,
    revenue: 0,
    flagged: 0,
  },
) {
  return {
    leads: m.leads,
    delivered: m.delivered,
    rejected: m.rejected,
    duplicates: m.duplicates,
    failed: m.failed,
    ftds: m.ftds,
    conversion_rate: m.delivered ? m.ftds / m.delivered : 0,
    flagged: m.flagged,
    flagged_rate: m.leads ? m.flagged / m.leads : 0,
    revenue: m.revenue / 100,
    cost: m.cost / 100,
    profit: (m.revenue - m.cost) / 100,
  };
}
export type AnalyticsMeasures = ReturnType<typeof analyticsMeasures>;

/**
 * Expected measures per group key over [from, to). registration: everything on created_at.
 * ftd: FTDs (and the revenue of leads with an FTD) on ftd_at; the rest on created_at.
 */
export function expectedAnalytics(
  rows: LeadInput[],
  from: string,
  to: string,
  dateType: 'registration' | 'ftd',
  keyOf: (r: LeadInput, at: number) => string | null = () => 'all',
): Map<string | null, AnalyticsMeasures> {
  const groups = new Map<string | null, AnalyticsSums>();
  const g = (k: string | null) =>
    groups.get(k) ??
    groups
      .set(k, {
        leads: 0,
        delivered: 0,
        rejected: 0,
        duplicates: 0,
        failed: 0,
        ftds: 0,
        cost: 0,
        revenue: 0,
        flagged: 0,
      })
      .get(k)!;
  for (const r of rows) {
    if (r.created_at! >= from && r.created_at! < to) {
      const m = g(keyOf(r, Date.parse(r.created_at!)));
      m.leads++;
      if (r.status === 'delivered') m.delivered++;
      if (r.status === 'rejected') m.rejected++;
      if (r.status === 'duplicate') m.duplicates++;
      if (r.status === 'failed') m.failed++;
      if (r.flags) m.flagged++;
      m.cost += r.cost_cents ?? 0;
      if (dateType === 'registration' || !r.ftd_at) {
        if (dateType === 'registration' && r.ftd_at) m.ftds++;
        m.revenue += r.revenue_cents ?? 0;
      }
    }
    if (dateType === 'ftd' && r.ftd_at && r.ftd_at >= from && r.ftd_at < to) {
      const m = g(keyOf(r, Date.parse(r.ftd_at)));
      m.ftds++;
      m.revenue += r.revenue_cents ?? 0;
    }
  }
  return new Map([...groups].map(([k, m]) => [k, analyticsMeasures(m)]));
}

/**
 * How a report's rows differ from the expected groups ([] when they agree): a wrong measure, a
 * missing or repeated group. Periods the report fills in without data must be all zeros.
 */
export function analyticsGroupMismatches(
  rows: Record<string, any>[],
  want: Map<string | null, AnalyticsMeasures>,
): string[] {
  const zero = analyticsMeasures();
  const out: string[] = [];
  for (const row of rows) {
    const expected = want.get(row.key) ?? zero;
    for (const [k, v] of Object.entries(expected))
      if (row[k] !== v) out.push(`${row.key}: ${k} is ${row[k]}, expected ${v}`);
  }
  const keys = new Set(rows.map((r) => r.key));
  for (const k of want.keys()) if (!keys.has(k)) out.push(`${k}: missing`);
  if (keys.size !== rows.length) out.push('a key appears twice');
  return out;
}

export function assertAnalyticsGroups(
  rows: Record<string, any>[],
  want: Map<string | null, AnalyticsMeasures>,
  what: string,
) {
  assert.deepEqual(analyticsGroupMismatches(rows, want), [], what);
}
