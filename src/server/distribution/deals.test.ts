// Deals on both sides (issue 16), on both engines: a campaign's payout per country and a
// partner's CPL / CPA deal per country are recorded on the lead when the event happens (so a
// price changed later rewrites nothing), they add up in analytics, and the CRG report computes
// the shortfall of a known data set.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, postLead, sampleLead } from '../../../test/distribution-world.js';
import { insertLeads, insertPartner, insertTrafficProvider } from '../../../test/fixtures.js';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson, type TestApp } from '../../../test/helpers.js';

const patch = (ta: TestApp, url: string, payload: object) =>
  call(ta.app, ta.ownerToken, { method: 'PATCH', url, payload });

const amounts = async (ta: TestApp, id: string) => {
  const l = await ta.db
    .selectFrom('leads')
    .select(['partner_id', 'cost_cents', 'revenue_cents', 'crg_bp'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return {
    partner_id: l.partner_id,
    cost: Number(l.cost_cents) / 100,
    revenue: Number(l.revenue_cents) / 100,
    crg_bp: l.crg_bp === null ? null : Number(l.crg_bp),
  };
};

forEachDatabase('deals', (engine) => {
  test('prices per country recorded at delivery and at the FTD; a later price change rewrites nothing; analytics add them up', async (t) => {
    const ta = await buildTestApp(t, engine);
    const cplDeal = { model: 'cpl', amount: 40, by_country: { AT: 35 }, crg: { rate: 10 } };
    const cpaDeal = { model: 'cpa', amount: 400, by_country: { DE: 450 } };
    const w = await makeWorld(
      t,
      ta,
      [{ fields: { deal: cplDeal, countries: ['DE', 'AT'] } }, { fields: { deal: cpaDeal } }],
      {
        campaign: { payout: { model: 'cpl', amount: 10, by_country: { DE: 12.5 } } },
      },
    );
    const [a, b] = w.partners;
    const partner = await getJson(ta, `/api/partners/${a.id}`);
    assert.deepEqual(partner.deal, {
      model: 'cpl',
      amount: 40,
      currency: 'USD',
      by_country: { AT: 35 },
      crg: { rate: 10, period: 'month' },
    });
    assert.deepEqual((await getJson(ta, `/api/campaigns/${w.campaignId}`)).payout, {
      model: 'cpl',
      amount: 10,
      currency: 'USD',
      by_country: { DE: 12.5 },
    });

    const post = async (country: string) => {
      const res = await postLead(ta, w.token, sampleLead({ country }));
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const de = await post('DE');
    const at = await post('AT');
    assert.deepEqual(await amounts(ta, de), { partner_id: a.id, cost: 12.5, revenue: 40, crg_bp: 1000 });
    assert.deepEqual(await amounts(ta, at), { partner_id: a.id, cost: 10, revenue: 35, crg_bp: 1000 });

    // New prices apply to new leads only.
    assert.equal(
      (await patch(ta, `/api/partners/${a.id}`, { deal: { ...cplDeal, amount: 50, by_country: {} } })).statusCode,
      200,
    );
    assert.equal(
      (await patch(ta, `/api/campaigns/${w.campaignId}`, { payout: { model: 'cpl', amount: 20 } })).statusCode,
      200,
    );
    const at2 = await post('AT');
    assert.deepEqual(await amounts(ta, at2), { partner_id: a.id, cost: 20, revenue: 50, crg_bp: 1000 });
    assert.deepEqual(await amounts(ta, at), { partner_id: a.id, cost: 10, revenue: 35, crg_bp: 1000 });

    // A CPL deal: an FTD reported with revenue adds nothing (the lead was paid for), and says so.
    const ftd = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/leads/${de}/conversion`,
      payload: { ftd: true, revenue: 300 },
    });
    assert.equal(ftd.statusCode, 200, ftd.body);
    assert.match(ftd.json().notes.join(' '), /CPL deal/);
    assert.equal((await amounts(ta, de)).revenue, 40);

    // A CPA deal: nothing at delivery, its price for the country at the FTD, whatever is reported.
    assert.equal((await patch(ta, `/api/partners/${a.id}`, { status: 'paused' })).statusCode, 200);
    const toB = await post('DE');
    assert.deepEqual(await amounts(ta, toB), { partner_id: b.id, cost: 20, revenue: 0, crg_bp: null });
    const pb = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${b.postbackToken}?lead_id=${toB}&ftd=1&revenue=300`,
    });
    assert.equal(pb.statusCode, 200, pb.body);
    assert.match(pb.json().notes.join(' '), /CPA deal's price \(450\), not the 300 reported/);
    assert.equal((await amounts(ta, toB)).revenue, 450);
    assert.equal(
      (await patch(ta, `/api/partners/${b.id}`, { deal: { ...cpaDeal, by_country: { DE: 999 } } })).statusCode,
      200,
    );
    assert.equal((await amounts(ta, toB)).revenue, 450);

    // Analytics: revenue 40 + 35 + 50 + 450, cost 12.5 + 10 + 20 + 20, profit the difference.
    const s = await getJson(ta, '/api/analytics/summary');
    assert.deepEqual([s.totals.revenue, s.totals.cost, s.totals.profit], [575, 62.5, 512.5]);
  });

  test('deals are validated at their fields: decimals, a guarantee without a CPL price, bad countries', async (t) => {
    const ta = await buildTestApp(t, engine);
    const id = await insertPartner(ta.db);
    const fields = async (deal: unknown) =>
      expectProblem(await patch(ta, `/api/partners/${id}`, { deal }), 400, 'validation_failed')
        .errors!.map((e) => e.field)
        .sort();
    assert.deepEqual(await fields({ model: 'cpa', amount: 1.234, by_country: { DE: 1.005 }, crg: { rate: 10 } }), [
      'deal.amount',
      'deal.by_country.DE',
      'deal.crg',
    ]);
    assert.deepEqual(await fields({ model: 'cpl', amount: 1, crg: { rate: 0 } }), ['deal.crg.rate']);
    assert.deepEqual(await fields({ model: 'cpl', amount: 1, crg: { rate: 10.125, period: 'year' } }), [
      'deal.crg.period',
      'deal.crg.rate',
    ]);
    assert.deepEqual(await fields({ model: 'cpl', amount: 1, by_country: { de: 1 } }), ['deal.by_country.de']);
    assert.deepEqual(await fields({ model: 'flat', amount: -1 }), ['deal.amount', 'deal.model']);
    // A campaign's payout per country: each bad price named.
    const provider = await insertTrafficProvider(ta.db);
    const campaign = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/campaigns',
      payload: {
        name: 'C',
        traffic_provider_id: provider,
        payout: { model: 'cpl', amount: 1, by_country: { DE: 1.001, AT: -1 } },
      },
    });
    assert.deepEqual(
      expectProblem(campaign, 400, 'validation_failed')
        .errors!.map((e) => e.field)
        .sort(),
      ['payout.by_country.AT', 'payout.by_country.DE'],
    );
    // null removes the deal.
    assert.equal((await patch(ta, `/api/partners/${id}`, { deal: { model: 'cpl', amount: 1 } })).statusCode, 200);
    assert.equal((await patch(ta, `/api/partners/${id}`, { deal: null })).json().deal, null);
  });

  test('the CRG report on a known data set: promised and actual rates, FTDs missing and what they are worth', async (t) => {
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const broker = await insertPartner(ta.db, { name: 'Broker X' });
    const weekly = await insertPartner(ta.db, { name: 'Weekly Y' });
    await ta.db
      .updateTable('partners')
      .set({
        deal: JSON.stringify({
          model: 'cpl',
          amount_cents: 4000,
          currency: 'USD',
          crg: { rate_bp: 1000, period: 'month' },
        }),
      })
      .where('id', '=', broker)
      .execute();
    await ta.db
      .updateTable('partners')
      .set({
        deal: JSON.stringify({
          model: 'cpl',
          amount_cents: 2000,
          currency: 'USD',
          crg: { rate_bp: 500, period: 'week' },
        }),
      })
      .where('id', '=', weekly)
      .execute();
    const delivered = (
      partner: string,
      at: string,
      n: number,
      ftds: number,
      revenueCents: number,
      bp: number | null = 1000,
    ) =>
      Array.from({ length: n }, (_, i) => ({
        traffic_provider_id: provider,
        partner_id: partner,
        status: 'delivered' as const,
        created_at: at,
        delivered_at: at,
        revenue_cents: revenueCents,
        crg_bp: bp,
        ftd_at: i < ftds ? '2026-12-20T10:00:00.000Z' : null,
      }));
    await insertLeads(ta.db, [
      ...delivered(broker, '2026-10-05T10:00:00.000Z', 100, 7, 4000), // October: 7 of 100 at 10 % → 3 missing, 30 % of $4,000
      ...delivered(broker, '2026-11-03T10:00:00.000Z', 50, 6, 4000), // November: 12 %, met
      ...delivered(broker, '2026-11-04T10:00:00.000Z', 10, 0, 4000, null), // no guarantee then: not in the report
      ...delivered(weekly, '2026-11-02T10:00:00.000Z', 40, 1, 2000, 500), // ISO week 45: 2 expected, 1 missing
      ...delivered(weekly, '2026-11-10T10:00:00.000Z', 20, 1, 2000, 500), // week 46: 1 expected, met
    ]);
    const r = await getJson(ta, '/api/analytics/crg?date_from=2026-10-01&date_to=2026-11-30&timezone=UTC');
    assert.deepEqual(
      r.rows.map((x: any) => [
        x.partner_name,
        x.period,
        x.promised_rate,
        x.leads,
        x.ftds,
        x.actual_rate,
        x.expected_ftds,
        x.shortfall_ftds,
        x.revenue,
        x.shortfall_amount,
        x.met,
      ]),
      [
        ['Broker X', '2026-10', 10, 100, 7, 7, 10, 3, 4000, 1200, false],
        ['Broker X', '2026-11', 10, 50, 6, 12, 5, 0, 2000, 0, true],
        ['Weekly Y', '2026-W45', 5, 40, 1, 2.5, 2, 1, 800, 400, false],
        ['Weekly Y', '2026-W46', 5, 20, 1, 5, 1, 0, 400, 0, true],
      ],
    );
    const one = await getJson(
      ta,
      `/api/analytics/crg?date_from=2026-10-01&date_to=2026-10-31&timezone=UTC&partner_id=${broker}`,
    );
    assert.deepEqual(
      one.rows.map((x: any) => x.period),
      ['2026-10'],
    );
  });
});
