// GET /api/analytics/crg on every engine, with the clock fixed: a period that has not ended (the
// running month or ISO week, in the report's zone) is `running`, never short; a period that has
// ended is met or short.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertLeads, insertPartner, insertTrafficProvider } from '../../../../test/fixtures.js';
import { buildTestApp, forEachDatabase, getJson, login, OWNER } from '../../../../test/helpers.js';

// Thursday 26 November 2026, noon UTC: day 26 of the running month, in ISO week 2026-W48.
const NOW = Date.parse('2026-11-26T12:00:00.000Z');

forEachDatabase('the CRG report', (engine) => {
  test('on day 26 the running month and week are running (met so far or not), not short; ended periods are met or short', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: NOW });
    const ta = await buildTestApp(t, engine);
    const provider = await insertTrafficProvider(ta.db);
    const monthly = await insertPartner(ta.db, { name: 'A monthly' });
    const weekly = await insertPartner(ta.db, { name: 'B weekly' });
    const deal = (period: string) =>
      JSON.stringify({ model: 'cpl', amount_cents: 4000, currency: 'USD', crg: { rate_bp: 1000, period } });
    await ta.db
      .updateTable('partners')
      .set({ deal: deal('month') })
      .where('id', '=', monthly)
      .execute();
    await ta.db
      .updateTable('partners')
      .set({ deal: deal('week') })
      .where('id', '=', weekly)
      .execute();
    // Ten leads per (partner, day), one of them with an FTD at the 30 October ones (10 % met), none after.
    const leads = [];
    for (const [partner, day] of [
      [monthly, '2026-10-30'],
      [monthly, '2026-11-02'],
      [monthly, '2026-11-26'],
      [weekly, '2026-11-16'], // W47: ended on Sunday 22
      [weekly, '2026-11-23'], // W48: running
    ])
      for (let i = 0; i < 10; i++) {
        const at = `${day}T08:0${i}:00.000Z`;
        leads.push({
          traffic_provider_id: provider,
          partner_id: partner,
          status: 'delivered' as const,
          created_at: at,
          delivered_at: at,
          revenue_cents: 4000,
          crg_bp: 1000,
          ftd_at: day === '2026-10-30' && i === 0 ? at : null,
        });
      }
    await insertLeads(ta.db, leads);

    const crg = await getJson(ta, '/api/analytics/crg?date_from=2026-10-01&date_to=2026-11-26&timezone=UTC');
    assert.deepEqual(
      crg.rows.map((r: any) => [r.partner_name, r.period, r.leads, r.ftds, r.shortfall_ftds, r.met, r.running]),
      [
        ['A monthly', '2026-10', 10, 1, 0, true, false],
        ['A monthly', '2026-11', 20, 0, 2, false, true], // day 26: running, not short
        ['B weekly', '2026-W47', 10, 0, 1, false, false], // ended: short
        ['B weekly', '2026-W48', 10, 0, 1, false, true],
      ],
    );

    // A week later the month is still running; on 1 December it has ended, and is short.
    t.mock.timers.setTime(Date.parse('2026-12-01T00:30:00.000Z'));
    const token = await login(ta.app, OWNER.email, OWNER.password); // the first session has expired meanwhile
    const december = await getJson(
      ta,
      '/api/analytics/crg?date_from=2026-11-01&date_to=2026-11-30&timezone=UTC',
      token,
    );
    assert.deepEqual(
      december.rows.map((r: any) => [r.period, r.running]),
      [
        ['2026-11', false],
        ['2026-W47', false],
        ['2026-W48', false],
      ],
    );
    // In a zone where it is still 30 November, the month is running.
    const la = await getJson(
      ta,
      '/api/analytics/crg?date_from=2026-11-01&date_to=2026-11-30&timezone=America/Los_Angeles',
      token,
    );
    assert.equal(la.rows.find((r: any) => r.period === '2026-11').running, true);
  });
});
