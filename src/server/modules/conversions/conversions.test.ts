import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { downUrl } from '../../../../test/partner-server.js';

forEachDatabase('conversions by hand', (engine) => {
  test('an operator records a sale status and an FTD: postback rules, source operator in the history and the audit log', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { campaign: { payout: { model: 'cpa', amount: 25 } } });
    const id = (await postLead(ta, w.token, sampleLead())).json().id;
    const set = (payload: Record<string, unknown>) =>
      call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/leads/${id}/conversion`, payload });
    assert.deepEqual((await set({ sale_status: 'Interested' })).json(), { changed: true, notes: [] });
    const ftd = await set({ sale_status: 'Deposited', ftd: true, ftd_at: '2026-11-20T10:00:00Z', revenue: 300 });
    assert.equal(ftd.json().changed, true, ftd.body);
    assert.match((await set({ ftd: true, revenue: 999 })).json().notes[0], /first one reported wins/);
    const lead = await getJson(ta, `/api/leads/${id}`);
    assert.deepEqual([lead.ftd_at, lead.revenue, lead.payout], ['2026-11-20T10:00:00.000Z', 300, 25]);
    assert.deepEqual(
      lead.status_history.map((h: any) => [h.source, h.sale_status]),
      [
        ['operator', 'Interested'],
        ['operator', 'Deposited'],
      ],
    );
    assert.equal((await getJson(ta, '/api/audit-log?action=lead.conversion_set')).data.length, 2);
    expectProblem(await set({ revenue: 1.234, ftd: true }), 400, 'validation_failed');
  });

  test('a lead that is not delivered does not convert (409); an unknown one is 404', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{ url: await downUrl() }]);
    const id = (await postLead(ta, w.token, sampleLead())).json().id;
    expectProblem(
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: `/api/leads/${id}/conversion`,
        payload: { sale_status: 'X' },
      }),
      409,
      'conflict',
    );
    expectProblem(
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/leads/nope/conversion',
        payload: { sale_status: 'X' },
      }),
      404,
      'not_found',
    );
  });
});
