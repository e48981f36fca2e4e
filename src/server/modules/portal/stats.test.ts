// The portal's statistics (issue 27): numbers checked against the leads inserted, in the user's
// time zone (a lead at 23:30 UTC is the next day in Berlin), FTDs only after the hold, payout
// only when shown, nothing of another provider's; CSV of the same.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompiledQuery } from 'kysely';
import { providerScope } from '../../db/scope.js';
import { rollupStatement, statsQuery, statsRows, type StatsSpec } from './leads-queries.js';
import { insertCampaign, insertLeads, insertTrafficProvider } from '../../../../test/fixtures.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  newPortalUser,
  parseCsv,
  type TestApp,
} from '../../../../test/helpers.js';

const HOUR = 3_600_000;
const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

async function world(ta: TestApp) {
  const a = await insertTrafficProvider(ta.db, { name: 'Provider A' });
  const b = await insertTrafficProvider(ta.db, { name: 'Provider B' });
  const cpl = await insertCampaign(ta.db, a, null, { name: 'CPL A' });
  const cpa = await insertCampaign(ta.db, a, null, { name: 'CPA A' });
  await ta.db
    .updateTable('campaigns')
    .set({ payout: JSON.stringify({ model: 'cpa', amount_cents: 5000, currency: 'USD' }) })
    .where('id', '=', cpa)
    .execute();
  const campB = await insertCampaign(ta.db, b, null, { name: 'Campaign B' });
  await ta.db.updateTable('traffic_providers').set({ ftd_hold_hours: 48 }).where('id', '=', a).execute();
  const user = await newPortalUser(ta, a);
  const tz = await call(ta.app, user.token, {
    method: 'PATCH',
    url: '/api/portal/me',
    payload: { timezone: 'Europe/Berlin' },
  });
  assert.equal(tz.statusCode, 200, tz.body);
  await insertLeads(ta.db, [
    // 23:30 UTC on the 10th is 00:30 on the 11th in Berlin.
    {
      traffic_provider_id: a,
      campaign_id: cpl,
      created_at: '2026-11-10T23:30:00.000Z',
      status: 'delivered',
      cost_cents: 1000,
      country: 'AT',
      sub_id1: 's1',
    },
    // An FTD long confirmed (CPA: its payout counts).
    {
      traffic_provider_id: a,
      campaign_id: cpa,
      created_at: '2026-11-11T10:00:00.000Z',
      status: 'delivered',
      ftd_at: '2026-11-12T10:00:00.000Z',
      cost_cents: 5000,
      sub_id1: 's1',
    },
    // An FTD in its hold (CPA: its payout does not count yet).
    {
      traffic_provider_id: a,
      campaign_id: cpa,
      created_at: '2026-11-11T12:00:00.000Z',
      status: 'delivered',
      ftd_at: ago(HOUR),
      cost_cents: 5000,
      sub_id1: 's2',
    },
    { traffic_provider_id: a, campaign_id: cpl, created_at: '2026-11-12T09:00:00.000Z', status: 'rejected' },
    { traffic_provider_id: a, created_at: '2026-11-13T08:00:00.000Z', status: 'duplicate' },
    // Outside the range (the 9th in Berlin) and another provider's: never counted.
    {
      traffic_provider_id: a,
      campaign_id: cpl,
      created_at: '2026-11-09T22:30:00.000Z',
      status: 'delivered',
      cost_cents: 1000,
    },
    {
      traffic_provider_id: b,
      campaign_id: campB,
      created_at: '2026-11-11T10:00:00.000Z',
      status: 'delivered',
      ftd_at: '2026-11-11T11:00:00.000Z',
      cost_cents: 7777,
      sub_id1: 'sub-B-marker',
    },
  ]);
  return { a, b, cpl, cpa, campB, user };
}

const RANGE = 'date_from=2026-11-10&date_to=2026-11-13';

type Row = {
  key: string | null;
  label: string;
  leads: number;
  accepted: number;
  ftds: number;
  conversion_rate: number;
  payout_cents: number | null;
  currency: string | null;
};

async function stats(ta: TestApp, token: string, query: string) {
  const res = await call(ta.app, token, { method: 'GET', url: `/api/portal/stats?${query}` });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as { timezone: string; rows: Row[]; totals: Row; ftd_hold_hours: number };
}

const brief = (r: Row) => [r.key, r.leads, r.accepted, r.ftds, r.payout_cents];

forEachDatabase('portal stats', (engine) => {
  test('by hour the provider rollup answers as the leads do, through inserts, updates, reversals and deletes', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { a, b, cpl, cpa } = await world(ta);
    const now = Math.floor(Date.now() / HOUR) * HOUR;
    const at = (h: number, m = 0) => new Date(now - h * HOUR + m * 60_000).toISOString();
    const ids = await insertLeads(ta.db, [
      { traffic_provider_id: a, campaign_id: cpl, created_at: at(30, 5), status: 'delivered', cost_cents: 1500 },
      {
        traffic_provider_id: a,
        campaign_id: cpa,
        created_at: at(30, 50),
        status: 'delivered',
        cost_cents: 5000,
        ftd_at: at(29),
      },
      {
        traffic_provider_id: a,
        campaign_id: cpa,
        created_at: at(10, 1),
        status: 'delivered',
        cost_cents: 5000,
        ftd_at: at(60),
      },
      { traffic_provider_id: a, campaign_id: cpl, created_at: at(10, 2), status: 'rejected' },
      {
        traffic_provider_id: a,
        campaign_id: cpl,
        created_at: at(70),
        status: 'delivered',
        cost_cents: 1500,
        ftd_at: at(69),
      },
      { traffic_provider_id: a, created_at: at(5), status: 'failed' },
      { traffic_provider_id: b, created_at: at(10, 3), status: 'delivered', cost_cents: 900, ftd_at: at(9) },
    ]);
    const spec = (cutoffHours: number): StatsSpec => ({
      fromMs: now - 100 * HOUR,
      toMs: now + HOUR,
      ftdCutoff: new Date(now - cutoffHours * HOUR).toISOString(),
      cpaCampaigns: [cpa],
      by: { bucketMs: HOUR },
    });
    const scope = providerScope(a);
    const sorted = (rows: { bucket: number | null }[]) => [...rows].sort((x, y) => x.bucket! - y.bucket!);
    const same = async (label: string) => {
      for (const cutoff of [0, 48, 100]) {
        const raw = (await statsQuery(ta.db, scope, spec(cutoff)).execute()) as Record<string, unknown>[];
        const fromLeads = raw.map((r) => ({
          bucket: Date.parse(`${r.g0}:00:00.000Z`),
          key: null,
          leads: Number(r.leads),
          accepted: Number(r.accepted),
          ftds: Number(r.ftds),
          payoutCents: Number(r.payout),
        }));
        const fromRollup = (await statsRows(ta.db, scope, spec(cutoff))).filter((r) => r.leads !== 0);
        assert.deepEqual(sorted(fromRollup), sorted(fromLeads), `${label}, cutoff ${cutoff} h ago`);
      }
    };
    await same('inserted');
    // The rollup holds one row per hour of A's leads (world() made some too), and A's only.
    const rolled = await ta.db
      .selectFrom('lead_provider_stats_hourly' as never)
      .select(['traffic_provider_id' as never, 'hour' as never])
      .execute();
    const leadHours = await ta.db.selectFrom('leads').select(['traffic_provider_id', 'created_at']).execute();
    const key = (p: string, h: string) => `${p} ${h}`;
    assert.deepEqual(
      new Set(rolled.map((r) => key((r as any).traffic_provider_id, (r as any).hour))),
      new Set(leadHours.map((l) => key(l.traffic_provider_id, l.created_at.slice(0, 13)))),
    );
    const set = (id: string, v: Record<string, unknown>) =>
      ta.db.updateTable('leads').set(v).where('id', '=', id).execute();
    await set(ids[3], { status: 'delivered', cost_cents: 1500 }); // delivered on a later try
    await set(ids[0], { ftd_at: at(1), sale_status: 'Deposited' }); // an FTD, still in its hold
    await set(ids[2], { ftd_at: null, cost_cents: 0 }); // reversed
    await set(ids[4], { created_at: at(71) }); // moved to another hour
    await set(ids[5], { traffic_provider_id: b }); // moved to another provider
    await same('updated');
    await ta.db.deleteFrom('leads').where('id', '=', ids[1]).execute();
    await same('deleted');
  });

  test('by day in the user’s zone, week, month, campaign, country, sub id: checked against the leads', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const day = await stats(ta, w.user.token, `group_by=day&${RANGE}`);
    assert.equal(day.timezone, 'Europe/Berlin');
    assert.equal(day.ftd_hold_hours, 48);
    assert.deepEqual(day.rows.map(brief), [
      ['2026-11-10', 0, 0, 0, 0],
      ['2026-11-11', 3, 3, 1, 1000 + 5000 + 0],
      ['2026-11-12', 1, 0, 0, 0],
      ['2026-11-13', 1, 0, 0, 0],
    ]);
    assert.equal(day.rows[1].conversion_rate, 0.3333);
    assert.deepEqual(brief(day.totals), [undefined, 5, 3, 1, 6000]);
    assert.equal(day.totals.conversion_rate, 0.2);
    assert.equal(day.totals.currency, 'USD');

    const week = await stats(ta, w.user.key, `group_by=week&${RANGE}`);
    assert.deepEqual(week.rows.map(brief), [['2026-W46', 5, 3, 1, 6000]]);
    assert.match(week.rows[0].label, /2026-11-09 – 2026-11-15/);
    const month = await stats(ta, w.user.token, `group_by=month&${RANGE}`);
    assert.deepEqual(month.rows.map(brief), [['2026-11', 5, 3, 1, 6000]]);
    assert.equal(month.rows[0].label, 'Nov 2026');

    const campaign = await stats(ta, w.user.token, `group_by=campaign&${RANGE}`);
    assert.deepEqual(
      campaign.rows.map((r) => [r.label, ...brief(r)]),
      [
        ['CPL A', w.cpl, 2, 1, 0, 1000],
        ['CPA A', w.cpa, 2, 2, 1, 5000],
        ['(no campaign)', null, 1, 0, 0, 0],
      ].sort((x, y) => Number(y[2]) - Number(x[2]) || String(x[1]).localeCompare(String(y[1]))),
    );
    const country = await stats(ta, w.user.token, `group_by=country&${RANGE}`);
    assert.deepEqual(
      country.rows.map((r) => [r.label, ...brief(r)]),
      [
        ['Germany (DE)', 'DE', 4, 2, 1, 5000],
        ['Austria (AT)', 'AT', 1, 1, 0, 1000],
      ],
    );
    const sub = await stats(ta, w.user.token, `group_by=sub_id1&${RANGE}`);
    assert.deepEqual(sub.rows.map(brief), [
      ['s1', 2, 2, 1, 6000],
      [null, 2, 0, 0, 0],
      ['s2', 1, 1, 0, 0],
    ]);
    assert.ok(!JSON.stringify([day, week, month, campaign, country, sub]).includes('sub-B-marker'));
    assert.ok(!JSON.stringify(campaign).includes('Campaign B'));

    // In UTC the 23:30 lead is on the 10th.
    await call(ta.app, w.user.token, { method: 'PATCH', url: '/api/portal/me', payload: { timezone: 'UTC' } });
    const utc = await stats(ta, w.user.token, `group_by=day&${RANGE}`);
    assert.deepEqual(utc.rows.map(brief)[0], ['2026-11-10', 1, 1, 0, 1000]);
  });

  test('fraud flags are never shown: with flagged leads (counted in the provider rollup) the statistics and their CSV answer exactly as without, and name no flag', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    const queries = [`group_by=day&${RANGE}`, `group_by=week&${RANGE}`, `group_by=campaign&${RANGE}`];
    const read = async () => {
      const out: string[] = [];
      for (const q of queries) {
        out.push(JSON.stringify(await stats(ta, w.user.token, q)));
        const csv = await call(ta.app, w.user.token, { method: 'GET', url: `/api/portal/stats/export.csv?${q}` });
        assert.equal(csv.statusCode, 200, csv.body);
        out.push(csv.body);
      }
      return out;
    };
    const before = await read();
    await ta.db.updateTable('leads').set({ flags: 0b101 }).where('traffic_provider_id', '=', w.a).execute();
    const flagged = await ta.db
      .selectFrom('lead_provider_stats_hourly' as never)
      .select((eb) => eb.fn.sum<number>('n_flagged' as never).as('n'))
      .where('traffic_provider_id' as never, '=', w.a as never)
      .executeTakeFirstOrThrow();
    assert.ok(Number(flagged.n) > 0, "the provider rollup counts the provider's flagged leads");
    const after = await read();
    assert.deepEqual(after, before);
    for (const text of after) assert.doesNotMatch(text, /flag/i);
  });

  test('the hold, payout hidden, bad queries, CSV', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await world(ta);
    // With no hold, the FTD recorded an hour ago counts, and so does its CPA payout.
    await ta.db.updateTable('traffic_providers').set({ ftd_hold_hours: 0 }).where('id', '=', w.a).execute();
    let s = await stats(ta, w.user.token, `group_by=month&${RANGE}`);
    assert.deepEqual(brief(s.totals), [undefined, 5, 3, 2, 11000]);
    await ta.db
      .updateTable('traffic_providers')
      .set({ ftd_hold_hours: 48, portal_payout: 0 })
      .where('id', '=', w.a)
      .execute();
    s = await stats(ta, w.user.token, `group_by=month&${RANGE}`);
    assert.deepEqual(brief(s.totals), [undefined, 5, 3, 1, null]);
    assert.equal(s.rows[0].currency, null);

    for (const [query, field] of [
      ['group_by=hour', 'group_by'],
      ['date_from=2026-13-01', 'date_from'],
      ['date_from=2026-11-10&date_to=2026-11-01', 'date_to'],
      ['date_from=2024-01-01&date_to=2026-11-01', 'date_to'],
    ]) {
      const res = await call(ta.app, w.user.token, { method: 'GET', url: `/api/portal/stats?${query}` });
      const body = expectProblem(res, 400, 'validation_failed');
      assert.ok(body.errors?.some((e) => e.field === field) || body.detail.includes(field), `${query}: ${res.body}`);
    }

    await ta.db.updateTable('traffic_providers').set({ portal_payout: 1 }).where('id', '=', w.a).execute();
    const res = await call(ta.app, w.user.key, {
      method: 'GET',
      url: `/api/portal/stats/export.csv?group_by=day&${RANGE}`,
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-disposition']), /filename="stats-day-2026-11-10-to-2026-11-13\.csv"/);
    const [header, ...rows] = parseCsv(res.body);
    assert.deepEqual(header, [
      'day',
      'day_key',
      'leads',
      'accepted',
      'ftds',
      'conversion_rate',
      'payout_cents',
      'currency',
    ]);
    assert.deepEqual(rows, [
      ['2026-11-10', '2026-11-10', '0', '0', '0', '0', '0', 'USD'],
      ['2026-11-11', '2026-11-11', '3', '3', '1', '0.3333', '6000', 'USD'],
      ['2026-11-12', '2026-11-12', '1', '0', '0', '0', '0', 'USD'],
      ['2026-11-13', '2026-11-13', '1', '0', '0', '0', '0', 'USD'],
    ]);
  });
});

test('statistics by day, campaign and country read only leads_provider_portal (SQLite plan)', async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  const provider = await insertTrafficProvider(ta.db);
  const now = Date.now();
  for (const by of [{ bucketMs: HOUR }, { column: 'campaign_id' as const }, { column: 'country' as const }]) {
    const c = statsQuery(ta.db, providerScope(provider), {
      fromMs: now - 90 * 24 * HOUR,
      toMs: now,
      ftdCutoff: ago(48 * HOUR),
      cpaCampaigns: ['x'],
      by,
    }).compile();
    const plan = await ta.db.executeQuery(CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]));
    const text = plan.rows.map((r) => (r as { detail: string }).detail).join(' | ');
    assert.match(
      text,
      /USING COVERING INDEX leads_provider_portal \(traffic_provider_id=\? AND created_at>\? AND created_at<\?\)/,
      text,
    );
  }
});

test('statistics by hour read the provider rollup by its key and held FTDs by leads_provider_ftd (SQLite plan)', async (t) => {
  const ta = await buildTestApp(t, 'sqlite');
  const provider = await insertTrafficProvider(ta.db);
  const now = Math.floor(Date.now() / HOUR) * HOUR;
  const c = rollupStatement(providerScope(provider), {
    fromMs: now - 90 * 24 * HOUR,
    toMs: now,
    ftdCutoff: ago(48 * HOUR),
    cpaCampaigns: ['x'],
    by: { bucketMs: HOUR },
  }).compile(ta.db);
  const plan = await ta.db.executeQuery(CompiledQuery.raw(`explain query plan ${c.sql}`, [...c.parameters]));
  const text = plan.rows.map((r) => (r as { detail: string }).detail).join(' | ');
  assert.match(text, /SEARCH r USING PRIMARY KEY \(traffic_provider_id=\? AND hour>\? AND hour<\?\)/, text);
  assert.match(text, /SEARCH l USING COVERING INDEX leads_provider_ftd \(traffic_provider_id=\? AND ftd_at>\?\)/, text);
});
