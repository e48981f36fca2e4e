import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newApiKey,
  newOperator,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';

forEachDatabase('notifications', (engine) => {
  test("a partner's cap at 90 % and full: one notification each, shown to who may see partners, read once", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{ fields: { daily_cap: 10 } }, {}]);
    for (let i = 0; i < 8; i++) assert.equal((await postLead(ta, w.token, sampleLead())).json().status, 'delivered');
    assert.equal((await getJson(ta, '/api/notifications')).unread_count, 0, '8 of 10: no alert yet');
    await postLead(ta, w.token, sampleLead());
    let notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => n.type),
      ['partner.cap_nearly_full'],
    );
    assert.equal(notes.data[0].partner_id, w.partners[0].id);
    assert.deepEqual([notes.data[0].data.used, notes.data[0].data.cap, notes.data[0].data.cap_kind], [9, 10, 'daily']);
    assert.match(notes.data[0].text, new RegExp(`${w.partners[0].name}: daily cap at 9 of 10`));
    for (let i = 0; i < 3; i++) await postLead(ta, w.token, sampleLead()); // the 10th fills it; the rest go to the second partner
    notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => n.type),
      ['partner.cap_full', 'partner.cap_nearly_full'],
      'each threshold once',
    );
    assert.equal(notes.unread_count, 2);

    // Someone who may not see partners sees none of it.
    const narrow = await newOperator(ta, ['leads:view']);
    const theirs = await getJson(ta, '/api/notifications', narrow.token);
    assert.deepEqual([theirs.data.length, theirs.unread_count], [0, 0]);

    // Read up to the older one: one left; then all.
    const older = notes.data[1].id;
    const read = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/notifications/read',
      payload: { up_to: older },
    });
    assert.equal(read.json().unread_count, 1, read.body);
    const unread = await getJson(ta, '/api/notifications?unread_only=true');
    assert.deepEqual(
      unread.data.map((n: any) => [n.type, n.unread]),
      [['partner.cap_full', true]],
    );
    // The mark never moves back.
    await call(ta.app, ta.ownerToken, { method: 'POST', url: '/api/notifications/read', payload: {} });
    const back = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/notifications/read',
      payload: { up_to: older },
    });
    assert.equal(back.json().unread_count, 0);
    // Marking read is the dashboard's: a key is refused.
    const key = await newApiKey(ta, ['partners:view']);
    expectProblem(
      await call(ta.app, key.secret, { method: 'POST', url: '/api/notifications/read', payload: {} }),
      403,
      'session_required',
    );
    // Each operator has their own mark.
    const other = await newOperator(ta, ['partners:view']);
    assert.equal((await getJson(ta, '/api/notifications', other.token)).unread_count, 2);
  });

  test("a flow target's daily cap alerts too, and a cap given back and taken again does not alert twice", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{ target: { daily_cap: 1 } }]);
    await postLead(ta, w.token, sampleLead());
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: any) => [n.type, n.data.cap_kind, n.data.flow_id]),
      [['partner.cap_full', 'flow_daily', w.flowId]],
    );
    // Given back (as when a partner declines) and taken again: still one alert.
    await ta.db.updateTable('cap_counters').set({ used: 0 }).execute();
    await ta.db.updateTable('cap_counters').set({ used: 1 }).execute();
    assert.equal((await getJson(ta, '/api/notifications')).data.length, 1);
  });
});
