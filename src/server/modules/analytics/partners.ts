// Partner performance: what each partner did with the leads offered to it, counted from delivery
// attempts (a lead refused by partner A and taken by partner B counts for both), by the time of
// the call. The leads report cannot say this: a rejected lead has no partner of its own.
import { sql, type Kysely, type SelectQueryBuilder } from 'kysely';
import { Type, type Static } from 'typebox';
import type { DB } from '../../db/database.js';
import { leadInScope, type DataScope } from '../../db/scope.js';
import { csvCell } from '../../http/csv.js';
import { ATTEMPT_MEASURES, ATTEMPT_ORIGIN, LINK_ORIGIN, reasonText } from './attempt-folds.js';
import { planFolds, readFolded, withBuckets, type Segments } from './attempt-rollups.js';
import { entityNames } from './queries.js';
import { resolveRange } from './range.js';
import { AnalyticsQuery } from './schemas.js';
import { countryName } from './service.js';

const InnerSchema = (description?: string) =>
  Type.Union(
    [
      Type.Literal('traffic_provider'),
      Type.Literal('campaign'),
      Type.Literal('flow'),
      Type.Literal('country'),
      Type.Literal('origin'),
    ],
    description ? { description } : {},
  );
const INNER_COLUMN = {
  traffic_provider: 'traffic_provider_id',
  campaign: 'campaign_id',
  flow: 'flow_id',
  country: 'country',
} as const;
const INNER_NONE = {
  traffic_provider: 'No traffic provider',
  campaign: 'No campaign',
  flow: 'No flow',
  country: 'Unknown country',
} as const;
/** then_by=origin: the call made for fresh traffic, or by a re-injection job (its attempts carry the job). */
const ORIGIN_LABEL: Record<string, string> = { fresh: 'Fresh traffic', reinjected: 'Re-injected' };
const TOP_REASONS = 5;

const { date_type: _dateType, ...rangeAndFilters } = AnalyticsQuery;
export const PartnerPerformanceQuery = Type.Object(
  {
    ...rangeAndFilters,
    then_by: Type.Optional(
      InnerSchema(
        "Split each partner by the leads' traffic provider (the provider × partner grid), campaign, flow or country, or by origin: fresh traffic apart from re-injection jobs' calls (keys fresh, reinjected)",
      ),
    ),
  },
  { additionalProperties: false },
);
export type PartnerPerformanceQueryT = Static<typeof PartnerPerformanceQuery>;

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const measureFields = {
  attempts: Count('Calls to the partner that finished (in-flight calls are left out)'),
  accepted: Count('Calls the partner accepted'),
  rejected: Count('Calls the partner answered with a refusal'),
  failed: Count('Calls that timed out or failed (no usable answer)'),
  acceptance_rate: Type.Number({
    minimum: 0,
    maximum: 1,
    description: 'accepted / attempts (0 without attempts); a ratio, not a percentage',
  }),
  average_answer_ms: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: 'Mean time from the call to the complete answer, in ms; null without timed calls',
  }),
  tracked_links: Count(
    "Leads taken while the partner's autologin links were tracked (a Leadgate link was handed out), by the time of delivery",
  ),
  opened_links: Count('Of those, the links opened at least once (by now)'),
  open_rate: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
    description: 'opened_links / tracked_links; null without tracked links (the partner does not track them)',
  }),
};
const Reason = Type.Object(
  {
    reason: Type.String({
      description:
        'The refusal or failure as recorded, with email addresses shown as {email} and numbers of 6 digits or more as {number}',
    }),
    attempts: Count('Calls that ended with this reason'),
  },
  { title: 'PartnerRefusalReason' },
);
const groupFields = {
  key: Type.Union([Type.String(), Type.Null()], {
    description:
      'Partner id; in children the provider, campaign or flow id, the country code (null: leads without one), or fresh / reinjected (then_by=origin)',
  }),
  label: Type.String({ description: 'Name of the partner, provider, campaign or flow; the country name' }),
  ...measureFields,
};
export const PartnerPerformance = Type.Object(
  {
    from: Type.String({ format: 'date-time', description: 'Start of the range (inclusive), UTC' }),
    to: Type.String({ format: 'date-time', description: 'End of the range (exclusive), UTC' }),
    timezone: Type.String(),
    then_by: Type.Union([InnerSchema(), Type.Null()], { description: 'As requested' }),
    totals: Type.Object(measureFields, { title: 'PartnerPerformanceMeasures' }),
    rows: Type.Array(
      Type.Object(
        {
          ...groupFields,
          top_reasons: Type.Array(Reason, {
            description: `Up to ${TOP_REASONS} most frequent refusal and failure reasons, most first`,
          }),
          children: Type.Optional(
            Type.Array(Type.Object(groupFields, { title: 'PartnerPerformanceGroup' }), {
              description: 'The then_by groups inside this partner, most attempts first',
            }),
          ),
        },
        { title: 'PartnerPerformanceRow' },
      ),
      { description: 'One row per partner called in the range, most attempts first' },
    ),
  },
  { title: 'PartnerPerformance' },
);
type Result = Static<typeof PartnerPerformance>;

interface Acc {
  attempts: number;
  accepted: number;
  rejected: number;
  failed: number;
  durationSum: number;
  timed: number;
  links: number;
  opened: number;
}
const zero = (): Acc => ({
  attempts: 0,
  accepted: 0,
  rejected: 0,
  failed: 0,
  durationSum: 0,
  timed: 0,
  links: 0,
  opened: 0,
});
const num = (v: unknown) => Number(v ?? 0);

function addTo(acc: Acc, r: Record<string, unknown>) {
  acc.attempts += num(r.attempts);
  acc.accepted += num(r.accepted);
  acc.rejected += num(r.rejected);
  acc.failed += num(r.failed);
  acc.durationSum += num(r.duration_sum);
  acc.timed += num(r.timed);
  acc.links += num(r.links);
  acc.opened += num(r.opened);
}

const measures = (a: Acc) => ({
  attempts: a.attempts,
  accepted: a.accepted,
  rejected: a.rejected,
  failed: a.failed,
  acceptance_rate: a.attempts ? a.accepted / a.attempts : 0,
  average_answer_ms: a.timed ? Math.round(a.durationSum / a.timed) : null,
  tracked_links: a.links,
  opened_links: a.opened,
  open_rate: a.links ? a.opened / a.links : null,
});

/** The then_by groupings the folded buckets carry (they hold the partner, the lead's provider and the origin). */
const FOLDED_INNER = { traffic_provider: 'traffic_provider_id', origin: 'origin' } as const;

export async function partnerPerformance(
  db: DB,
  q: PartnerPerformanceQueryT,
  operatorTz: string,
  scope: DataScope,
): Promise<Result> {
  const range = resolveRange(q, operatorTz);
  // The reader's scope: its providers' leads (so the lead is joined), its partners' attempts.
  const providerScope = leadInScope({ trafficProviderIds: scope.trafficProviderIds, partnerIds: null }, 'l');
  const byLead = q.then_by !== undefined && q.then_by !== 'origin' ? q.then_by : null;
  const needsLead =
    byLead !== null || !!(q.traffic_provider_id || q.campaign_id || q.flow_id || q.country || providerScope);
  // Attempts by the time of the call (a); tracked links by the time they were handed out (k); over `segments`.
  const base = (segments: Segments, from: 'lead_attempts as a' | 'autologin_links as k' = 'lead_attempts as a') => {
    const [alias, time] = from === 'lead_attempts as a' ? ['a', 'a.requested_at'] : ['k', 'k.created_at'];
    let b: SelectQueryBuilder<any, any, any> = (db as unknown as Kysely<any>)
      .selectFrom(from)
      .where((eb) =>
        eb.or(
          segments.map(([a, z]) =>
            eb.and([eb(time, '>=', new Date(a).toISOString()), eb(time, '<', new Date(z).toISOString())]),
          ),
        ),
      );
    if (needsLead) b = b.innerJoin('leads as l', 'l.id', `${alias}.lead_id`);
    if (q.partner_id) b = b.where(`${alias}.partner_id`, 'in', q.partner_id);
    if (providerScope) b = b.where(providerScope);
    const partnerScope = leadInScope({ trafficProviderIds: null, partnerIds: scope.partnerIds }, alias);
    if (partnerScope) b = b.where(partnerScope);
    for (const [param, column] of [
      ['traffic_provider_id', 'traffic_provider_id'],
      ['campaign_id', 'campaign_id'],
      ['flow_id', 'flow_id'],
      ['country', 'country'],
    ] as const) {
      if (q[param]) b = b.where(`l.${column}`, 'in', q[param]!);
    }
    return b;
  };
  const inner = byLead ? sql.ref(`l.${INNER_COLUMN[byLead]}`) : q.then_by === 'origin' ? ATTEMPT_ORIGIN : null;
  const linkInner = q.then_by === 'origin' ? LINK_ORIGIN : inner;

  // The folded buckets answer what they carry (partner, provider, origin); a campaign, flow or
  // country reads every attempt of the range, as does what is not folded yet.
  const folds =
    q.campaign_id || q.flow_id || q.country || (q.then_by && !(q.then_by in FOLDED_INNER))
      ? { days: [], hours: [], raw: [[range.fromMs, range.toMs]] as Segments }
      : await planFolds(db, range.fromMs, range.toMs);
  const foldedFilters = { partnerIds: q.partner_id, trafficProviderIds: q.traffic_provider_id, scope };
  const foldedInner = q.then_by ? FOLDED_INNER[q.then_by as keyof typeof FOLDED_INNER] : null;
  const folded = await readFolded(db, 'attempt_stats', folds, foldedFilters, {
    groupBy: [sql`s.partner_id`, ...(foldedInner ? [sql.ref(`s.${foldedInner}`)] : [])],
    sums: ATTEMPT_MEASURES,
    byProvider: q.then_by === 'traffic_provider',
  });
  const foldedReasons = await readFolded(db, 'attempt_reasons', folds, foldedFilters, {
    groupBy: [sql`s.partner_id`, sql`s.reason`],
    sums: ['n'],
    byProvider: false,
  });
  const countsRaw = withBuckets(folds.raw, folded.unfolded);
  const reasonsRaw = withBuckets(folds.raw, foldedReasons.unfolded);

  const countRows: Record<string, unknown>[] = folded.rows.map((r) => ({ ...r, p: r.g0, e: r.g1 }));
  if (countsRaw.length) {
    let counts = base(countsRaw)
      .where('a.outcome', '!=', 'in_flight')
      .select([
        'a.partner_id as p',
        sql<number>`count(*)`.as('attempts'),
        sql<number>`sum(case when a.outcome = 'accepted' then 1 else 0 end)`.as('accepted'),
        sql<number>`sum(case when a.outcome = 'rejected' then 1 else 0 end)`.as('rejected'),
        sql<number>`sum(case when a.outcome in ('timeout', 'error') then 1 else 0 end)`.as('failed'),
        sql<number>`sum(a.duration_ms)`.as('duration_sum'),
        sql<number>`count(a.duration_ms)`.as('timed'),
      ])
      .groupBy('a.partner_id');
    if (inner) counts = counts.select(inner.as('e')).groupBy(inner);
    let links = base(countsRaw, 'autologin_links as k')
      .select([
        'k.partner_id as p',
        sql<number>`count(*)`.as('links'),
        sql<number>`sum(case when k.opens > 0 then 1 else 0 end)`.as('opened'),
      ])
      .groupBy('k.partner_id');
    if (linkInner) links = links.select(linkInner.as('e')).groupBy(linkInner);
    countRows.push(...(await counts.execute()), ...(await links.execute()));
  }
  const reasons: Record<string, unknown>[] = reasonsRaw.length
    ? await base(reasonsRaw)
        .where('a.outcome', 'in', ['rejected', 'timeout', 'error'])
        .select(['a.partner_id as p', 'a.reason', 'a.outcome', sql<number>`count(*)`.as('n')])
        .groupBy(['a.partner_id', 'a.reason', 'a.outcome'])
        .execute()
    : [];

  const totals = zero();
  const partners = new Map<string, { acc: Acc; children: Map<string | null, Acc>; reasons: Map<string, number> }>();
  const partnerOf = (id: string) => {
    let p = partners.get(id);
    if (!p) partners.set(id, (p = { acc: zero(), children: new Map(), reasons: new Map() }));
    return p;
  };
  for (const r of countRows) {
    const p = partnerOf(String(r.p));
    addTo(totals, r);
    addTo(p.acc, r);
    if (inner) {
      const key = r.e === null || r.e === undefined ? null : String(r.e);
      let c = p.children.get(key);
      if (!c) p.children.set(key, (c = zero()));
      addTo(c, r);
    }
  }
  const addReason = (partner: unknown, text: string, n: unknown) => {
    const p = partnerOf(String(partner));
    p.reasons.set(text, (p.reasons.get(text) ?? 0) + num(n));
  };
  for (const r of foldedReasons.rows) addReason(r.g0, String(r.g1), r.n);
  for (const r of reasons) addReason(r.p, reasonText(r.reason, r.outcome), r.n);

  const partnerNames = await entityNames(db, 'partner_id', [...partners.keys()]);
  const innerKeys = new Set<string>();
  for (const p of partners.values()) for (const k of p.children.keys()) if (k !== null) innerKeys.add(k);
  const innerNames =
    byLead && byLead !== 'country' ? await entityNames(db, INNER_COLUMN[byLead], [...innerKeys]) : null;
  const innerLabel = (key: string | null) =>
    q.then_by === 'origin'
      ? ORIGIN_LABEL[key ?? 'fresh']
      : key === null
        ? INNER_NONE[byLead!]
        : byLead === 'country'
          ? countryName(key)
          : (innerNames!.get(key) ?? key);
  const byAttempts = <T extends { attempts: number; label: string }>(a: T, b: T) =>
    b.attempts - a.attempts || a.label.localeCompare(b.label);

  const rows = [...partners]
    .map(([id, p]) => ({
      key: id,
      label: partnerNames.get(id) ?? id,
      ...measures(p.acc),
      top_reasons: [...p.reasons]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, TOP_REASONS)
        .map(([reason, attempts]) => ({ reason, attempts })),
      ...(inner
        ? {
            children: [...p.children]
              .map(([key, acc]) => ({ key, label: innerLabel(key), ...measures(acc) }))
              .sort(byAttempts),
          }
        : {}),
    }))
    // A partner with only in-flight calls has nothing to show yet.
    .filter((r) => r.attempts > 0)
    .sort(byAttempts);

  return {
    from: new Date(range.fromMs).toISOString(),
    to: new Date(range.toMs).toISOString(),
    timezone: range.tz,
    then_by: q.then_by ?? null,
    totals: measures(totals),
    rows,
  };
}

const MEASURE_COLUMNS = [
  'attempts',
  'accepted',
  'rejected',
  'failed',
  'acceptance_rate',
  'average_answer_ms',
  'tracked_links',
  'opened_links',
  'open_rate',
] as const;

/** One line per partner (with its top reasons), its then_by groups after it, then the totals. */
export function partnerPerformanceCsv(r: Result): string {
  const levels = r.then_by ? ['partner', 'partner_key', r.then_by, `${r.then_by}_key`] : ['partner', 'partner_key'];
  const blank = r.then_by ? [null, null] : [];
  const line = (cells: unknown[]) => cells.map(csvCell).join(',') + '\r\n';
  const values = (m: Result['totals']) => MEASURE_COLUMNS.map((k) => m[k]);
  let out = line([...levels, ...MEASURE_COLUMNS, 'top_reasons']);
  for (const row of r.rows) {
    out += line([
      row.label,
      row.key,
      ...blank,
      ...values(row),
      row.top_reasons.map((x) => `${x.reason} (${x.attempts})`).join('; '),
    ]);
    for (const c of row.children ?? []) out += line([row.label, row.key, c.label, c.key, ...values(c), null]);
  }
  out += line(['Total', null, ...blank, ...values(r.totals), null]);
  return out;
}

export function partnerPerformanceFileName(r: Result): string {
  const day = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: r.timezone }).format(new Date(ms));
  return `partners${r.then_by ? `-${r.then_by}` : ''}-${day(Date.parse(r.from))}-to-${day(Date.parse(r.to) - 1)}.csv`;
}
