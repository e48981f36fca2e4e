import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson, newOperator } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { rejecting } from '../../../../test/partner-server.js';
import { attemptCountsQuery, lastAttemptQuery } from './queries.js';

forEachDatabase('partner health (GET /api/partners/health)', (engine) => {
  test('failing, capped, paused and ok partners from their real calls, with today by outcome and cap fill; pausing one is the audited status change', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(
      t,
      ta,
      [
        { handler: rejecting(500, 'boom'), fields: { name: 'Failing Broker' } },
        { handler: rejecting(200, 'no capacity'), fields: { name: 'Refusing Broker' } },
        { fields: { name: 'Capped Broker', daily_cap: 1 } },
        { fields: { name: 'Paused Broker', status: 'paused' } },
        { fields: { name: 'Fine Broker' } },
      ],
      { maxAttempts: 5 },
    );
    const [failing, refusing, capped, paused, fine] = w.partners.map((p) => p.id);
    for (let i = 0; i < 3; i++) assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered');

    const reader = await newOperator(ta, ['partners:view']);
    const health = await getJson(ta, '/api/partners/health', reader.token);
    assert.equal(health.failing_after, 3);
    const byId = new Map(health.data.map((h: any) => [h.id, h]));
    const h = (id: string) => byId.get(id) as any;
    assert.deepEqual(
      health.data.map((x: any) => [x.name, x.status, x.health]),
      [
        ['Failing Broker', 'active', 'failing'],
        ['Capped Broker', 'active', 'capped'],
        ['Paused Broker', 'paused', 'paused'],
        ['Fine Broker', 'active', 'ok'],
        ['Refusing Broker', 'active', 'ok'],
      ],
      'failing first, then capped, paused, ok (a partner that answers with refusals is not failing)',
    );
    const today = new Date().toISOString().slice(0, 10);
    assert.deepEqual(h(failing).today, { day: today, calls: 3, delivered: 0, refused: 0, failed: 3 });
    assert.equal(h(failing).consecutive_failures, 3);
    assert.deepEqual(
      [h(failing).last_call.outcome, h(failing).last_call.http_status],
      ['rejected', 500],
      'the latest call, answered HTTP 500',
    );
    assert.deepEqual(h(refusing).today, { day: today, calls: 3, delivered: 0, refused: 3, failed: 0 });
    assert.deepEqual(h(capped).today, { day: today, calls: 1, delivered: 1, refused: 0, failed: 0 });
    assert.deepEqual(h(capped).caps, { day: { used: 1, cap: 1 }, hour: null, total: null });
    assert.deepEqual(h(fine).today, { day: today, calls: 2, delivered: 2, refused: 0, failed: 0 });
    assert.deepEqual(h(fine).caps, { day: null, hour: null, total: null });
    assert.deepEqual([h(paused).today.calls, h(paused).last_call], [0, null]);

    // Paused with the partners' own status change (PATCH), audited as every status change is.
    const res = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/partners/${failing}`,
      payload: { status: 'paused' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const after = await getJson(ta, '/api/partners/health');
    assert.deepEqual(
      after.data.filter((x: any) => x.id === failing).map((x: any) => [x.health, x.consecutive_failures]),
      [['paused', 3]],
    );
    const [entry] = (await getJson(ta, '/api/audit-log?action=partner.updated')).data;
    assert.deepEqual([entry.target_id, entry.details.changes], [failing, { status: 'paused' }]);

    // Read with partners:view only.
    const other = await newOperator(ta, ['leads:view']);
    expectProblem(await call(ta.app, other.token, { method: 'GET', url: '/api/partners/health' }), 403, 'forbidden');
  });

  if (engine === 'sqlite')
    test("today's calls and the latest call are read through the partner's attempts index, not a scan", async (t) => {
      const ta = await buildTestApp(t, engine);
      for (const q of [attemptCountsQuery(ta.db, 'p1', '2026-11-26T00:00:00.000Z'), lastAttemptQuery(ta.db, 'p1')]) {
        const { sql: text, parameters: params } = q.compile();
        const parameters = [...params];
        const inlined = text.replace(/\?/g, () => `'${String(parameters.shift())}'`);
        const rows = (await sql.raw(`explain query plan ${inlined}`).execute(ta.db)).rows as { detail: string }[];
        const plan = rows.map((r) => r.detail).join('; ');
        assert.match(
          plan,
          /USING (COVERING )?INDEX lead_attempts_partner \(partner_id=\? AND requested_at>\?\)|USING INDEX lead_attempts_partner \(partner_id=\?\)/,
          plan,
        );
        assert.doesNotMatch(plan, /SCAN lead_attempts/, plan);
      }
    });
});
