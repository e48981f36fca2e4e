// Issue 16's "Done when", through the API on both engines: "broker X takes 50 DE and 20 AT leads a
// day, at most 10 an hour, Monday to Friday, and pays $40 per lead with a 10 % conversion
// guarantee". Ten hours of a Monday, 12 leads an hour posted at once (more than the hour allows),
// then a Saturday: the caps hold, the prices are on the leads, and the reports say so.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, postLead, sampleLead } from './distribution-world.js';
import { buildTestApp, call, forEachDatabase, login, OWNER } from './helpers.js';
import { accepting } from './partner-server.js';

const MONDAY_9_BERLIN = Date.parse('2026-11-30T08:00:00.000Z');
const HOUR = 3_600_000;
const WEEKDAYS_BERLIN = { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '00:00', to: '00:00' };

forEachDatabase('the broker example', (engine) => {
  test('50 DE and 20 AT a day, at most 10 an hour, Monday to Friday, $40 per lead with a 10 % CRG: caps, prices and the guarantee hold and show', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: MONDAY_9_BERLIN });
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(
      t,
      ta,
      [
        {
          handler: accepting(5),
          fields: {
            working_hours: WEEKDAYS_BERLIN,
            deal: { model: 'cpl', amount: 40, crg: { rate: 10, period: 'month' } },
          },
          target: { country_caps: { DE: 50, AT: 20 }, hourly_cap: 10, schedule: WEEKDAYS_BERLIN },
        },
      ],
      { campaign: { payout: { model: 'cpl', amount: 25, by_country: { AT: 20 } } } },
    );
    const broker = w.partners[0];
    const flow = (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/flows/${w.flowId}` })).json();
    const target = flow.targets[0].id;

    const delivered: { id: string; country: string }[] = [];
    for (let hour = 0; hour < 10; hour++) {
      const batch = [...Array(8).fill('DE'), ...Array(4).fill('AT')];
      const answers = await Promise.all(batch.map((country) => postLead(ta, w.token, sampleLead({ country }))));
      const taken = answers
        .map((r, i) => ({ r: r.json(), country: batch[i] }))
        .filter((a) => a.r.status === 'delivered');
      assert.ok(taken.length <= 10, `hour ${hour}: ${taken.length} delivered`);
      // While both countries have room, the hour's 10 are all used.
      if (hour < 5) assert.equal(taken.length, 10, `hour ${hour}`);
      delivered.push(...taken.map((a) => ({ id: a.r.id as string, country: a.country })));
      t.mock.timers.tick(HOUR);
    }
    assert.equal(delivered.filter((d) => d.country === 'DE').length, 50);
    assert.equal(delivered.filter((d) => d.country === 'AT').length, 20);
    assert.equal(broker.server!.received.length, 70);
    const counters = await ta.db.selectFrom('cap_counters').select(['scope', 'period', 'used']).execute();
    const hours = counters.filter((c) => c.scope === `target:${target}` && c.period.includes('T'));
    assert.ok(hours.length >= 7, 'the 70 took at least seven hours');
    assert.ok(hours.every((c) => Number(c.used) <= 10));
    assert.equal(
      hours.reduce((n, c) => n + Number(c.used), 0),
      70,
    );

    // Saturday: closed, and the lead says why.
    t.mock.timers.tick(5 * 24 * HOUR); // Saturday 19:00 in Berlin
    const token = await login(ta.app, OWNER.email, OWNER.password);
    const saturday = (await postLead(ta, w.token, sampleLead({ country: 'DE' }))).json();
    assert.equal(saturday.status, 'rejected');
    const lead = (await call(ta.app, token, { method: 'GET', url: `/api/leads/${saturday.id}` })).json();
    assert.deepEqual(
      lead.verdicts.map((v: any) => [v.partner_id, v.verdict]),
      [[broker.id, 'hours']],
    );

    // Prices on the leads: $40 each, cost by country; five FTDs against a promise of seven.
    const rows = await ta.db
      .selectFrom('leads')
      .select(['id', 'country', 'revenue_cents', 'cost_cents', 'crg_bp'])
      .where('status', '=', 'delivered')
      .execute();
    assert.ok(
      rows.every(
        (r) =>
          Number(r.revenue_cents) === 4000 &&
          Number(r.crg_bp) === 1000 &&
          Number(r.cost_cents) === (r.country === 'AT' ? 2000 : 2500),
      ),
    );
    for (const d of delivered.slice(0, 5)) {
      assert.equal(
        (await call(ta.app, token, { method: 'POST', url: `/api/leads/${d.id}/conversion`, payload: { ftd: true } }))
          .statusCode,
        200,
      );
    }
    const get = async (url: string) => (await call(ta.app, token, { method: 'GET', url })).json();
    const monday = 'date_from=2026-11-30&date_to=2026-11-30&timezone=Europe/Berlin';
    const summary = await get(`/api/analytics/summary?${monday}`);
    assert.deepEqual(
      [summary.totals.delivered, summary.totals.revenue, summary.totals.cost, summary.totals.profit],
      [70, 2800, 1650, 1150],
    );
    const crg = await get(`/api/analytics/crg?${monday}`);
    assert.deepEqual(
      crg.rows.map((r: any) => [
        r.partner_id,
        r.period,
        r.promised_rate,
        r.leads,
        r.ftds,
        r.expected_ftds,
        r.shortfall_ftds,
        r.revenue,
        r.shortfall_amount,
        r.met,
      ]),
      [[broker.id, '2026-11', 10, 70, 5, 7, 2, 2800, 800, false]],
    );
  });
});
