import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, getJson } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { accepting, rejecting } from '../../../../test/partner-server.js';
import { checkSilentProviders } from '../traffic-providers/silence.js';

forEachDatabase('partner and provider health', (engine) => {
  test('after pause_after_failures failed calls in a row the partner is paused, audited, and an alert says so; it is then skipped', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{ handler: rejecting(503, 'maintenance'), fields: { name: 'Flaky Broker', pause_after_failures: 3 } }, {}]);
    const flaky = w.partners[0];
    for (let i = 0; i < 3; i++) assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered', 'the second partner takes it');
    const p = await getJson(ta, `/api/partners/${flaky.id}`);
    assert.deepEqual([p.status, p.consecutive_failures, p.pause_after_failures], ['paused', 3, 3]);
    const audit = (await getJson(ta, '/api/audit-log?action=partner.paused')).data;
    assert.equal(audit.length, 1);
    assert.equal(audit[0].target_id, flaky.id);
    assert.equal(audit[0].via, 'system');
    assert.match(audit[0].id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/, 'a time-ordered id like every other entry');
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(notes.data.map((n: any) => [n.type, n.data.paused]), [['partner.failing', true]]);
    assert.match(notes.data[0].text, /Flaky Broker paused after 3 failed calls in a row/);

    const calls = flaky.server!.received.length;
    await postLead(ta, w.token, sampleLead());
    assert.equal(flaky.server!.received.length, calls, 'a paused partner is not called');
    // Turned on again: the count starts over.
    const on = await call(ta.app, ta.ownerToken, { method: 'PATCH', url: `/api/partners/${flaky.id}`, payload: { status: 'active' } });
    assert.equal(on.json().consecutive_failures, 0);
  });

  test('off by default: five failures in a row raise one alert and pause nothing; an answered call resets the count', async (t) => {
    const ta = await buildTestApp(t, engine);
    let failing = true;
    const flakyHandler = (req: Parameters<ReturnType<typeof accepting>>[0], res: Parameters<ReturnType<typeof accepting>>[1]) =>
      failing ? rejecting(500, 'boom')(req, res) : accepting()(req, res);
    const w = await makeWorld(t, ta, [{ handler: flakyHandler }]);
    const id = w.partners[0].id;
    for (let i = 0; i < 6; i++) await postLead(ta, w.token, sampleLead());
    let p = await getJson(ta, `/api/partners/${id}`);
    assert.deepEqual([p.status, p.consecutive_failures], ['active', 6]);
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(notes.data.map((n: any) => [n.type, n.data.failures, n.data.paused]), [['partner.failing', 5, false]], 'once, at the fifth');
    failing = false;
    assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered');
    p = await getJson(ta, `/api/partners/${id}`);
    assert.equal(p.consecutive_failures, 0);
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
    assert.deepEqual(notes.data.map((n: any) => n.type), ['traffic_provider.silent'], 'once per silence');
    assert.match(notes.data[0].text, /Quiet Affiliate sent no lead for 2 hours/);
  });
});
