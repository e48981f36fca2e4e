import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { startReceiver } from '../../../../test/webhook-receiver.js';
import type { ReceivedRequest } from '../../../../test/partner-server.js';
import { chainDue } from './chain.js';
import { readProviderLog } from './service.js';

const HOUR = 3_600_000;

forEachDatabase('FTD hold', (engine) => {
  test("an FTD recorded at T reaches the provider's log, postback and scoped webhook at T + hold, once; one reversed during the hold never", async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}], { campaign: { payout: { model: 'cpa', amount: 40 } } });
    await ta.db.updateTable('traffic_providers').set({ ftd_hold_hours: 48 }).where('id', '=', w.providerId).execute();

    const tracker = await startReceiver(t); // the provider's postback
    const scoped = await startReceiver(t); // a webhook limited to this provider
    const ops = await startReceiver(t); // the operator's own webhook, for every provider
    const pb = await call(ta.app, ta.ownerToken, {
      method: 'PUT',
      url: `/api/traffic-providers/${w.providerId}/postbacks`,
      payload: {
        postbacks: [
          { event_type: 'lead.ftd', campaign_id: null, url: tracker.url.replace('/leads', '/pb?lead={lead_id}') },
        ],
      },
    });
    assert.equal(pb.statusCode, 200, pb.body);
    const hooks: string[] = [];
    for (const r of [scoped, ops]) {
      const res = await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: '/api/webhooks',
        payload: { name: `Hook ${hooks.length}`, url: r.url, event_types: ['lead.ftd'] },
      });
      assert.equal(res.statusCode, 201, res.body);
      hooks.push(res.json().id);
    }
    await ta.db
      .updateTable('event_subscriptions')
      .set({ traffic_provider_id: w.providerId })
      .where('destination_kind', '=', 'webhook')
      .where('destination_id', '=', hooks[0])
      .execute();

    const kept = (await postLead(ta, w.token, sampleLead())).json().id as string;
    // Reversed during the hold: one after its deliveries were made (held), one before.
    const [early, late] = [
      (await postLead(ta, w.token, sampleLead())).json().id as string,
      (await postLead(ta, w.token, sampleLead())).json().id as string,
    ];
    const conversion = async (id: string, ftd: boolean) => {
      const res = await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: `/api/leads/${id}/conversion`,
        payload: { ftd },
      });
      assert.equal(res.statusCode, 200, res.body);
    };
    const T = Date.now();
    await conversion(kept, true);
    await conversion(early, true);
    await ta.app.events.drain();
    await conversion(late, true);
    await conversion(early, false);
    await conversion(late, false);

    const ftdsIn = (r: { received: ReceivedRequest[] }) =>
      r.received.map(
        (q) => (q.json?.lead?.id ?? q.json?.lead_id ?? new URL(q.url, 'http://x').searchParams.get('lead')) as string,
      );
    const ftdEntries = async () =>
      (await readProviderLog(ta.db, w.providerId, { after: 0, limit: 500 })).data
        .filter((e) => e.kind !== 'received' && e.kind !== 'accepted')
        .map((e) => [e.kind, e.lead_id]);
    const step = async () => {
      await chainDue(ta.db);
      await ta.app.events.drain();
    };

    await step();
    assert.deepEqual(await ftdEntries(), [], 'nothing about either FTD in the log during the hold');
    assert.deepEqual(ftdsIn(tracker), []);
    assert.deepEqual(ftdsIn(scoped), []);
    assert.equal(ops.received.length, 3, "the operator's own webhook is not held");

    t.mock.timers.enable({ apis: ['Date'], now: T + 48 * HOUR - 60_000 });
    await step();
    assert.deepEqual(await ftdEntries(), []);
    assert.deepEqual(ftdsIn(tracker), []);
    assert.deepEqual(ftdsIn(scoped), []);

    t.mock.timers.setTime(T + 48 * HOUR + 60_000);
    await step();
    await step();
    assert.deepEqual(await ftdEntries(), [
      ['ftd', kept],
      ['payout', kept],
    ]);
    assert.deepEqual(ftdsIn(tracker), [kept]);
    assert.equal(scoped.received.length, 1);
    assert.match(scoped.received[0].body, new RegExp(kept));
    const cancelled = await ta.db
      .selectFrom('event_deliveries')
      .select(['state', 'lead_id'])
      .where('lead_id', 'in', [early, late])
      .where('destination_kind', '=', 'postback')
      .execute();
    assert.deepEqual(
      cancelled.map((d) => [d.lead_id, d.state]).sort(),
      [
        [early, 'cancelled'],
        [late, 'cancelled'],
      ].sort(),
    );
  });
});
