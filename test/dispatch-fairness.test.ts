// One slow receiver never holds up the rest (issue 24, finding 5): a provider's tracker that
// answers slowly, with a backlog of postbacks, does not delay another provider's postback by
// more than that one's own answer time and a dispatch tick, and holds only PER_DESTINATION of the
// process's send slots while the rest of its backlog waits in the database, unleased.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PER_DESTINATION } from '../src/server/events/dispatcher.js';
import { makeWorld, postLead, sampleLead } from './distribution-world.js';
import { buildTestApp, call, forEachDatabase, until, type TestApp } from './helpers.js';
import { json, startPartner } from './partner-server.js';
import { startReceiver } from './webhook-receiver.js';

/** The slow tracker's answer time: well inside the 10 s send timeout, as the 9 s is. */
const SLOW_MS = 3_000;
const TICK_MS = 100;
const SLOW_LEADS = 48;

async function postbackOnDelivered(ta: TestApp, providerId: string, trackerUrl: string) {
  const res = await call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: `/api/traffic-providers/${providerId}/postbacks`,
    payload: {
      postbacks: [
        {
          event_type: 'lead.delivered',
          campaign_id: null,
          url: `${trackerUrl.replace('/leads', '/pb')}?click={sub_id1}`,
        },
      ],
    },
  });
  assert.equal(res.statusCode, 200, res.body);
}

forEachDatabase('dispatch fairness', (engine) => {
  test(`a tracker answering in ${SLOW_MS / 1000} s with ${SLOW_LEADS} postbacks waiting holds ${PER_DESTINATION} sends at most and does not hold up another provider's postback`, async (t) => {
    const ta = await buildTestApp(t, engine);
    let inFlight = 0;
    let mostInFlight = 0;
    const slowTracker = await startPartner(t, async (_req, res) => {
      mostInFlight = Math.max(mostInFlight, ++inFlight);
      await new Promise((r) => setTimeout(r, SLOW_MS));
      inFlight--;
      if (!res.destroyed) json(res, 200, {});
    });
    const fastTracker = await startReceiver(t);
    const slow = await makeWorld(t, ta, [{}]);
    const fast = await makeWorld(t, ta, [{}]);
    await postbackOnDelivered(ta, slow.providerId, slowTracker.url);
    await postbackOnDelivered(ta, fast.providerId, fastTracker.url);

    for (let i = 0; i < SLOW_LEADS; i++)
      assert.equal((await postLead(ta, slow.token, sampleLead({ sub_id1: `slow-${i}` }))).json().status, 'delivered');
    ta.app.jobs.reschedule('event-dispatch', TICK_MS);
    await until(() => slowTracker.received.length > 0, 'the slow tracker to be called');

    const posted = await postLead(ta, fast.token, sampleLead({ sub_id1: 'fast' }));
    assert.equal(posted.json().status, 'delivered', posted.body);
    const postedAt = Date.now();
    await until(() => fastTracker.received.length === 1, "the other provider's postback", 30_000);
    const waited = fastTracker.received[0].at - postedAt;
    t.diagnostic(`the other provider's postback came ${waited} ms after its lead`);
    // Before the fix it waited for the round of 48 slow calls, 16 at a time: about 3 × SLOW_MS.
    assert.ok(
      waited < SLOW_MS,
      `the other provider's postback came ${waited} ms after its lead, not after the slow tracker's answers`,
    );
    assert.match(fastTracker.received[0].url, /click=fast/);

    // The slow tracker's backlog is in the database, not leased to this process.
    const leased = await ta.db
      .selectFrom('event_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('destination_id', '=', slow.providerId)
      .where('state', '=', 'pending')
      .where('lease_token', 'is not', null)
      .executeTakeFirstOrThrow();
    assert.ok(Number(leased.n) <= PER_DESTINATION, `${leased.n} of the slow tracker's deliveries leased at once`);
    assert.ok(mostInFlight <= PER_DESTINATION, `the slow tracker had ${mostInFlight} calls in flight at once`);
    assert.ok(slowTracker.received.length < SLOW_LEADS, 'its backlog was still waiting');
  });

  test('two slow trackers holding their slots never make a fast one wait for a tick: its backlog goes on as its sends end', async (t) => {
    const ta = await buildTestApp(t, engine);
    const SLOW = 4_000;
    const TICK = 3_000;
    const FAST_LEADS = 40;
    const slowHandler = async (_req: unknown, res: import('node:http').ServerResponse) => {
      await new Promise((r) => setTimeout(r, SLOW));
      if (!res.destroyed) json(res, 200, {});
    };
    const fastTracker = await startReceiver(t);
    const fast = await makeWorld(t, ta, [{}]);
    await postbackOnDelivered(ta, fast.providerId, fastTracker.url);
    for (let i = 0; i < FAST_LEADS; i++)
      assert.equal((await postLead(ta, fast.token, sampleLead({ sub_id1: `fast-${i}` }))).json().status, 'delivered');
    // Two providers whose trackers answer slowly, each with more postbacks than it may have in flight.
    for (const n of [1, 2]) {
      const tracker = await startPartner(t, slowHandler);
      const w = await makeWorld(t, ta, [{}]);
      await postbackOnDelivered(ta, w.providerId, tracker.url);
      for (let i = 0; i < PER_DESTINATION + 4; i++)
        await postLead(ta, w.token, sampleLead({ sub_id1: `slow${n}-${i}` }));
    }

    const started = Date.now();
    ta.app.jobs.reschedule('event-dispatch', TICK);
    await until(() => fastTracker.received.length === FAST_LEADS, 'every fast postback', 30_000);
    const took = Math.max(...fastTracker.received.map((r) => r.at)) - started;
    t.diagnostic(`${FAST_LEADS} fast postbacks sent within ${took} ms beside two slow trackers`);
    // Claiming only at a tick (or when the slow ones answer), they would take more than one tick.
    assert.ok(took < TICK - 500, `the fast tracker's ${FAST_LEADS} postbacks took ${took} ms`);
  });
});
