import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, getJson, newOperator } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { accepting, json, rejecting } from '../../../../test/partner-server.js';
import { startReceiver } from '../../../../test/webhook-receiver.js';
import { checkSilentProviders } from '../traffic-providers/silence.js';

forEachDatabase('partner and provider health', (engine) => {
  test('after pause_after_failures failed calls in a row the partner is paused, audited, and an alert says so; it is then skipped', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [
      { handler: rejecting(503, 'maintenance'), fields: { name: 'Flaky Broker', pause_after_failures: 3 } },
      {},
    ]);
    const flaky = w.partners[0];
    for (let i = 0; i < 3; i++)
      assert.equal(
        (await postLead(ta, w.token, sampleLead())).json().status,
        'delivered',
        'the second partner takes it',
      );
    const p = await getJson(ta, `/api/partners/${flaky.id}`);
    assert.deepEqual([p.status, p.consecutive_failures, p.pause_after_failures], ['paused', 3, 3]);
    const audit = (await getJson(ta, '/api/audit-log?action=partner.paused')).data;
    assert.equal(audit.length, 1);
    assert.equal(audit[0].target_id, flaky.id);
    assert.equal(audit[0].via, 'system');
    assert.match(
      audit[0].id,
      /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/,
      'a time-ordered id like every other entry',
    );
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => [n.type, n.data.paused]),
      [['partner.failing', true]],
    );
    assert.match(notes.data[0].text, /Flaky Broker paused after 3 failed calls in a row/);

    const calls = flaky.server!.received.length;
    await postLead(ta, w.token, sampleLead());
    assert.equal(flaky.server!.received.length, calls, 'a paused partner is not called');
    // Turned on again: the count starts over.
    const on = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/partners/${flaky.id}`,
      payload: { status: 'active' },
    });
    assert.equal(on.json().consecutive_failures, 0);
  });

  test('off by default: five failures in a row raise one alert and pause nothing; an answered call resets the count', async (t) => {
    const ta = await buildTestApp(t, engine);
    let failing = true;
    const flakyHandler = (
      req: Parameters<ReturnType<typeof accepting>>[0],
      res: Parameters<ReturnType<typeof accepting>>[1],
    ) => (failing ? rejecting(500, 'boom')(req, res) : accepting()(req, res));
    const w = await makeWorld(t, ta, [{ handler: flakyHandler }]);
    const id = w.partners[0].id;
    for (let i = 0; i < 6; i++) await postLead(ta, w.token, sampleLead());
    let p = await getJson(ta, `/api/partners/${id}`);
    assert.deepEqual([p.status, p.consecutive_failures], ['active', 6]);
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => [n.type, n.data.failures, n.data.paused]),
      [['partner.failing', 5, false]],
      'once, at the fifth',
    );
    failing = false;
    assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered');
    p = await getJson(ta, `/api/partners/${id}`);
    assert.equal(p.consecutive_failures, 0);
  });

  test("a failing partner quoting the lead's email and phone: the alert, every webhook and the audit entry show them masked", async (t) => {
    const ta = await buildTestApp(t, engine);
    // Answers 500 quoting what it was sent, in its own spelling of the phone.
    const quoting = (req: { json: any }, res: Parameters<typeof json>[0]) =>
      json(res, 500, {
        error: `lead ${req.json.email} (tel. ${String(req.json.phone).replace(/^(\+\d\d)(\d{3})/, '$1 $2 ')}) is broken`,
      });
    const hooks = [];
    for (const format of ['json', 'slack', 'telegram']) {
      const receiver = await startReceiver(t);
      const res = await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/webhooks',
        payload: {
          name: format,
          url: receiver.url,
          format,
          ...(format === 'telegram' && { telegram_chat_id: '42' }),
          event_types: ['partner.failing'],
        },
      });
      assert.equal(res.statusCode, 201, res.body);
      hooks.push({ id: res.json().id as string, receiver });
    }
    const w = await makeWorld(t, ta, [
      { handler: quoting, fields: { name: 'Chatty Broker', pause_after_failures: 5 } },
      {},
    ]);
    const leads = Array.from({ length: 5 }, () => sampleLead());
    for (const lead of leads) assert.equal((await postLead(ta, w.token, lead)).json().status, 'delivered');
    // Any of the five leads' email or national number, however it is grouped.
    const leaks = (text: string) =>
      leads.some((l) => text.includes(l.email) || text.replace(/\D/g, '').includes(l.phone.slice(3)));
    const reasons = await ta.db
      .selectFrom('lead_attempts')
      .select('reason')
      .where('partner_id', '=', w.partners[0].id)
      .execute();
    assert.ok(
      reasons.every((r) => leaks(String(r.reason))),
      `the partner did quote its leads: ${reasons[0].reason}`,
    );

    const reader = await newOperator(ta, ['partners:view']);
    const notes = await getJson(ta, '/api/notifications', reader.token);
    assert.deepEqual(notes.data.map((n: any) => [n.type, n.data.paused]).sort(), [
      ['partner.failing', false],
      ['partner.failing', true],
    ]);
    assert.ok(!leaks(JSON.stringify(notes)), JSON.stringify(notes.data[0]));
    assert.match(notes.data[0].data.last_reason, /lead a\*\*\*@example\.com/, 'masked, still telling what happened');

    await ta.app.events.drain();
    for (const h of hooks) {
      assert.equal(h.receiver.received.length, 2, 'both alerts sent');
      for (const r of h.receiver.received) assert.ok(!leaks(r.body), r.body);
      const [d] = (await getJson(ta, `/api/webhooks/${h.id}/deliveries`)).data;
      assert.ok(!leaks((await getJson(ta, `/api/webhooks/${h.id}/deliveries/${d.id}`)).payload));
    }

    const auditor = await newOperator(ta, ['audit:view']);
    const entry = (await getJson(ta, '/api/audit-log?action=partner.paused', auditor.token)).data[0];
    assert.ok(!leaks(JSON.stringify(entry.details)), JSON.stringify(entry.details));
    assert.match(entry.details.last_reason, /a\*\*\*@example\.com/);
    // Who may see contacts sees the partner's words as it wrote them.
    assert.ok(leaks(JSON.stringify((await getJson(ta, '/api/audit-log?action=partner.paused')).data[0].details)));
  });

  test('a traffic provider silent for its silent_after_hours raises one alert per silence', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { provider: { silent_after_hours: 2, name: 'Quiet Affiliate' } });
    assert.equal(await checkSilentProviders(ta.db), 0, 'just made: not silent yet');
    await postLead(ta, w.token, sampleLead());
    const threeHoursLater = Date.now() + 3 * 3600_000;
    assert.equal(await checkSilentProviders(ta.db, threeHoursLater), 1);
    await checkSilentProviders(ta.db, threeHoursLater + 60_000);
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => n.type),
      ['traffic_provider.silent'],
      'once per silence',
    );
    assert.match(notes.data[0].text, /Quiet Affiliate sent no lead for 2 hours/);
  });
});
