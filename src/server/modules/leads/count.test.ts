// GET /api/leads/count: the exact figure the search's bounded count (total=true, up to 10,000)
// cannot give, under the same filters, permission and validation as the search.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, newOperator } from '../../../../test/helpers.js';
import { insertLeads, insertLeadWorld } from '../../../../test/fixtures.js';

forEachDatabase('Leads exact count', (engine) => {
  test('counts past the search cap, under the same filters; leads:view and valid filters are needed', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await insertLeadWorld(ta.db);
    await insertLeads(
      ta.db,
      Array.from({ length: 10_012 }, (_, i) => ({
        traffic_provider_id: i < 9 ? w.providerB : w.providerA,
        status: i % 4 === 0 ? ('rejected' as const) : ('new' as const),
      })),
    );
    const get = (url: string, token: string | null = ta.ownerToken) => call(ta.app, token, { method: 'GET', url });

    const capped = await get('/api/leads/search?limit=1&total=true');
    assert.deepEqual(capped.json().total, { count: 10_000, exact: false }, 'the search stops at its cap');
    const count = async (qs: string, token?: string) => {
      const res = await get(`/api/leads/count?${qs}`, token);
      assert.equal(res.statusCode, 200, res.body);
      return res.json().count as number;
    };
    assert.equal(await count(''), 10_012);
    assert.equal(await count('status=rejected'), 2_503);
    assert.equal(await count(`traffic_provider_id=${w.providerB}`), 9);
    assert.equal(await count(`traffic_provider_id=${w.providerB}&status=rejected`), 3);
    assert.equal(await count('status=failed'), 0);
    assert.equal(await count('q=Ada'), 10_012, 'a name search');

    // The search's validation, every bad parameter named; its permission.
    const bad = await get('/api/leads/count?status=nope&date_from=soon');
    expectProblem(bad, 400, 'validation_failed');
    assert.deepEqual(
      bad
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
      ['date_from', 'status'],
    );
    expectProblem(await get('/api/leads/count?limit=5'), 400, 'validation_failed');
    const viewer = await newOperator(ta, ['leads:view']);
    assert.equal(await count('status=rejected', viewer.token), 2_503);
    expectProblem(await get('/api/leads/count?q=ada%40example.com', viewer.token), 400, 'validation_failed');
    const stranger = await newOperator(ta, ['analytics:view']);
    expectProblem(await get('/api/leads/count', stranger.token), 403, 'forbidden');
    expectProblem(await get('/api/leads/count', null), 401, 'unauthorized');
  });
});
