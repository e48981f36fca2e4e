// Forms show every error at once only if the API names every bad field in one answer: a body its
// schema refuses still gets each route's other checks (config.moreChecks) — partners in
// partners.test.ts, flows, campaigns and traffic providers here — on every engine.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { insertFlow, insertPartner, insertTrafficProvider } from './fixtures.js';
import { buildTestApp, call, expectProblem, forEachDatabase } from './helpers.js';

const fieldsOf = (res: Awaited<ReturnType<typeof call>>) =>
  expectProblem(res, 400, 'validation_failed')
    .errors!.map((e) => e.field)
    .sort();

forEachDatabase('One answer names every bad field', (engine) => {
  test('flows: a bad max_attempts with an unknown partner, a repeated one and a bad time zone', async (t) => {
    const ta = await buildTestApp(t, engine);
    const p = await insertPartner(ta.db, { name: 'Known' });
    const body = {
      name: 'Flow',
      max_attempts: 0,
      targets: [
        { partner_id: p, priority: 1 },
        { partner_id: p, priority: 2 },
        {
          partner_id: 'nope',
          priority: 3,
          schedule: { timezone: 'Mars/Olympus', days: [1], from: '09:00', to: '18:00' },
        },
      ],
    };
    assert.deepEqual(
      fieldsOf(await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/flows', payload: body })),
      ['max_attempts', 'targets[1].partner_id', 'targets[2].partner_id', 'targets[2].schedule.timezone'],
    );
    const flow = await insertFlow(ta.db, [p], { name: 'Existing' });
    assert.deepEqual(
      fieldsOf(
        await call(ta.app, ta.ownerToken, {
          method: 'PATCH',
          url: `/api/flows/${flow}`,
          payload: { ...body, name: '' },
        }),
      ),
      ['max_attempts', 'name', 'targets[1].partner_id', 'targets[2].partner_id', 'targets[2].schedule.timezone'],
    );
    // A target of the wrong shape: the schema names it, the extra checks skip it.
    assert.deepEqual(
      fieldsOf(
        await call(ta.app, ta.ownerToken, {
          method: 'POST',
          url: '/api/flows',
          payload: { name: 'F', targets: [5, { partner_id: 7 }] },
        }),
      ),
      ['targets[0]', 'targets[1].partner_id', 'targets[1].priority'],
    );
  });

  test('campaigns: "UK" with an unknown provider and flow and a payout in tenths of cents', async (t) => {
    const ta = await buildTestApp(t, engine);
    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/campaigns',
      payload: {
        name: '',
        traffic_provider_id: 'nope',
        flow_id: 'nope',
        countries: ['UK'],
        payout: { model: 'cpl', amount: 1.005 },
      },
    });
    assert.deepEqual(fieldsOf(res), ['countries[0]', 'flow_id', 'name', 'payout.amount', 'traffic_provider_id']);
    assert.equal(
      res.json().errors.find((e: { field: string }) => e.field === 'countries[0]').message,
      '"UK" is not an ISO 3166-1 alpha-2 code; use GB',
    );
  });

  test('traffic providers: a blank name with an allow-list entry that is not an address', async (t) => {
    const ta = await buildTestApp(t, engine);
    const tp = await insertTrafficProvider(ta.db, { name: 'TP' });
    const body = { name: ' ', allowed_ips: ['10.0.0.0/8', 'office'] };
    assert.deepEqual(
      fieldsOf(await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/traffic-providers', payload: body })),
      ['allowed_ips[1]', 'name'],
    );
    assert.deepEqual(
      fieldsOf(
        await call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/traffic-providers/${tp}`, payload: body }),
      ),
      ['allowed_ips[1]', 'name'],
    );
  });
});

forEachDatabase('Validation messages read as words', (engine) => {
  test('a number out of range, a wrong type, a repeated item and a bad date-time are each named plainly', async (t) => {
    const ta = await buildTestApp(t, engine);
    const p = await insertPartner(ta.db, { name: 'Known' });
    const flow = await insertFlow(ta.db, [p], { name: 'Existing' });
    const res = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/flows/${flow}`,
      payload: { max_attempts: 'three', review: { hold_flags: ['ip_country', 'ip_country'], min_score: 101 } },
    });
    const messages = Object.fromEntries(
      expectProblem(res, 400, 'validation_failed').errors!.map((e) => [e.field, e.message]),
    );
    assert.deepEqual(messages, {
      max_attempts: 'must be a whole number',
      'review.hold_flags': 'must not list the same item twice',
      'review.min_score': 'must be at most 100',
    });
    const low = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/flows/${flow}`,
      payload: { review: { hold_flags: [], min_score: -1 } },
    });
    assert.deepEqual(expectProblem(low, 400, 'validation_failed').errors, [
      { field: 'review.min_score', message: 'must be at least 0' },
    ]);
    const key = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/api-keys',
      payload: { name: 'k', scopes: ['leads:view', 'leads:view'], expires_at: 'next week' },
    });
    const keyMessages = Object.fromEntries(
      expectProblem(key, 400, 'validation_failed').errors!.map((e) => [e.field, e.message]),
    );
    assert.match(keyMessages.expires_at ?? '', /ISO 8601 date-time/);
  });
});
