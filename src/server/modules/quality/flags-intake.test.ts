import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadShippedRanges } from '../../geo/ip-country.js';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson, newOperator } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';

forEachDatabase('Fraud flags at intake', (engine) => {
  test('intake stores each lead’s flags and score; the lead shows them; Leads filters by them', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    await loadShippedRanges();
    const post = async (over: Record<string, unknown>) => {
      const res = await postLead(ta, w.token, sampleLead(over));
      assert.equal(res.statusCode, 201, res.body);
      return getJson(ta, `/api/leads/${res.json().id}`);
    };
    const clean = await post({ ip: '193.99.144.80' });
    assert.deepEqual([clean.flags, clean.quality_score], [[], 100]);
    const foreignPhone = await post({ phone: '+33612345678' });
    assert.deepEqual([foreignPhone.flags, foreignPhone.quality_score], [['phone_country'], 70]);
    const tollFree = await post({ phone: '+4980012345678' });
    assert.deepEqual(tollFree.flags, ['phone_type']);
    const disposable = await post({ email: `x${Date.now()}@mailinator.com` });
    assert.deepEqual(disposable.flags, ['disposable_email']);
    const foreignIp = await post({ ip: '8.8.8.8', phone: '+33612345679' });
    assert.deepEqual([foreignIp.flags, foreignIp.quality_score], [['phone_country', 'ip_country'], 45]);

    const search = async (query: string) =>
      (await getJson(ta, `/api/leads/search?date_type=registration&${query}`)).data
        .map((l: { id: string }) => l.id)
        .sort();
    assert.deepEqual(await search('flag=ip_country'), [foreignIp.id]);
    assert.deepEqual(
      await search('flag=phone_country,disposable_email'),
      [foreignPhone.id, disposable.id, foreignIp.id].sort(),
    );
    assert.deepEqual(await search('flagged=false'), [clean.id]);
    assert.deepEqual(await search('max_score=50'), [foreignIp.id]);
    const bad = await call(ta.app, ta.ownerToken, {
      method: 'GET',
      url: '/api/leads/search?date_type=registration&flag=nope',
    });
    assert.equal(expectProblem(bad, 400, 'validation_failed').errors![0].field, 'flag');

    // New weights score new leads; stored scores stay.
    const put = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/quality/settings',
      payload: { weights: { phone_country: 10 } },
    });
    assert.equal(put.statusCode, 200, put.body);
    assert.equal(put.json().weights.phone_country, 10);
    assert.equal(put.json().weights.ip_country, 25, 'the others keep theirs');
    assert.equal((await post({ phone: '+33612345670' })).quality_score, 90);
    assert.equal((await getJson(ta, `/api/leads/${foreignPhone.id}`)).quality_score, 70);
    const weights = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: '/api/quality/settings',
      payload: { weights: { phone_country: 101 } },
    });
    expectProblem(weights, 400, 'validation_failed');
    const viewer = await newOperator(ta, ['quality:view']);
    const seen = await getJson(ta, '/api/quality/settings', viewer.token);
    assert.deepEqual(
      seen.flags.map((f: { name: string }) => f.name),
      [
        'phone_country',
        'phone_type',
        'disposable_email',
        'ip_country',
        'velocity_ip',
        'velocity_phone',
        'velocity_email_domain',
      ],
    );
    expectProblem(
      await call(ta.app, viewer.token, { method: 'PUT', url: '/api/quality/settings', payload: { weights: {} } }),
      403,
      'forbidden',
    );
    // A role limited to some providers may edit its providers' blocklists, not the weights every lead is scored by.
    const scoped = await newOperator(ta, ['quality:view', 'quality:edit'], {
      traffic_provider_ids: [w.providerId],
      partner_ids: null,
    });
    const refused = await call(ta.app, scoped.token, {
      method: 'PUT',
      url: '/api/quality/settings',
      payload: { weights: { phone_country: 0 } },
    });
    assert.match(expectProblem(refused, 403, 'forbidden').detail, /limited to some traffic providers/);
    assert.equal((await getJson(ta, '/api/quality/settings')).weights.phone_country, 10);
  });
});
