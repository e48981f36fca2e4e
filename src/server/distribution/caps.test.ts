// Caps through the engine: partner daily and total caps, a flow target's daily cap, a slot given
// back when the partner declines, cap edits applying at once, and 30 concurrent leads against a
// cap of 10 (on PostgreSQL through two connection pools, as two server processes would).
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  capCounters,
  insertPendingLead,
  makeWorld,
  secondRunner,
  type WorldPartner,
} from '../../../test/distribution-world.js';
import { buildTestApp, call, forEachDatabase, type Engine, type TestApp } from '../../../test/helpers.js';
import { accepting, rejecting } from '../../../test/partner-server.js';

// Daily caps count calendar days: every test runs at one fixed instant (the server reads the same
// mocked Date), so a run that crosses UTC midnight cannot split a day's count in two.
const NOON = Date.parse('2026-06-15T12:00:00.000Z');
const TODAY = '2026-06-15'; // partners without working hours count UTC days

async function setup(t: TestContext, engine: Engine, partners: WorldPartner[]) {
  t.mock.timers.enable({ apis: ['Date'], now: NOON });
  const ta = await buildTestApp(t, engine);
  const w = await makeWorld(t, ta, partners, { campaign: { payout: { model: 'cpa', amount: 40 } } });
  return { ta, w, lead: () => insertPendingLead(ta, w), run: (id: string) => ta.app.delivery.run(id) };
}

async function patch(ta: TestApp, url: string, payload: object) {
  const res = await call(ta.app, ta.ownerToken, { method: 'PATCH', url, payload });
  assert.equal(res.statusCode, 200, res.body);
}

forEachDatabase('distribution caps', (engine) => {
  test('a daily cap of 3: three of five leads delivered, the rest rejected naming the cap', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{ fields: { daily_cap: 3 } }]);
    const outcomes = [];
    for (let i = 0; i < 5; i++) outcomes.push(await run(await lead()));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['delivered', 'delivered', 'delivered', 'rejected', 'rejected'],
    );
    assert.equal(outcomes[4].reason, `No eligible partner: ${w.partners[0].name} (daily cap full)`);
    assert.equal(w.partners[0].server!.received.length, 3);
    assert.deepEqual(await capCounters(ta), { [`partner:${w.partners[0].id} ${TODAY}`]: 3 });
  });

  test('a partner that declines gives its slot back; the next one in the waterfall takes the lead', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [
      { handler: rejecting(400, 'no'), fields: { daily_cap: 1, total_cap: 1 } },
      {},
    ]);
    for (let i = 0; i < 2; i++) assert.equal((await run(await lead())).status, 'delivered');
    // Offered both leads: the first one's slot came back when it declined.
    assert.equal(w.partners[0].server!.received.length, 2);
    assert.deepEqual(await capCounters(ta), {
      [`partner:${w.partners[0].id} ${TODAY}`]: 0,
      [`partner:${w.partners[0].id} total`]: 0,
    });
  });

  test("total cap, and a flow target's own daily cap", async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{ fields: { total_cap: 2 } }, { target: { daily_cap: 1 } }]);
    const [a, b] = w.partners;
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await run(await lead()));
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['delivered', 'delivered', 'delivered', 'rejected'],
    );
    assert.equal(
      outcomes[3].reason,
      `No eligible partner: ${a.name} (total cap full), ${b.name} (daily cap in this flow full)`,
    );
    const flow = (await call(ta.app, ta.ownerToken, { method: 'GET', url: `/api/flows/${w.flowId}` })).json();
    assert.deepEqual(await capCounters(ta), {
      [`partner:${a.id} total`]: 2,
      [`target:${flow.targets[1].id} ${TODAY}`]: 1,
    });
  });

  test('a cap edit applies to the next lead: raised, removed, lowered below what was used', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{ fields: { daily_cap: 1 } }]);
    const p = `/api/partners/${w.partners[0].id}`;
    assert.equal((await run(await lead())).status, 'delivered');
    assert.equal((await run(await lead())).status, 'rejected');
    await patch(ta, p, { daily_cap: 2 });
    assert.equal((await run(await lead())).status, 'delivered');
    await patch(ta, p, { daily_cap: null });
    assert.equal((await run(await lead())).status, 'delivered');
    assert.equal((await run(await lead())).status, 'delivered');
    // Leads delivered while uncapped are not counted (only set caps take slots): 2 used today.
    await patch(ta, p, { daily_cap: 3 });
    assert.equal((await run(await lead())).status, 'delivered');
    assert.match((await run(await lead())).reason!, /daily cap full/);
    await patch(ta, p, { daily_cap: 1 }); // below what is used
    assert.match((await run(await lead())).reason!, /daily cap full/);
    assert.deepEqual(Object.values(await capCounters(ta)), [3]);
  });

  test('30 leads at once against a daily cap of 10: exactly 10 delivered', async (t) => {
    const { ta, w, lead } = await setup(t, engine, [{ handler: accepting(20), fields: { daily_cap: 10 } }]);
    const ids = [];
    for (let i = 0; i < 30; i++) ids.push(await lead());
    // On PostgreSQL half the leads go through a second pool and client: a second server process.
    const other = await secondRunner(t, ta, engine);
    const outcomes = await Promise.all(ids.map((id, i) => (i % 2 ? other : ta.app.delivery).run(id)));
    assert.equal(outcomes.filter((o) => o.status === 'delivered').length, 10);
    const refused = outcomes.filter((o) => o.status === 'rejected');
    assert.equal(refused.length, 20);
    assert.ok(refused.every((o) => o.reason === `No eligible partner: ${w.partners[0].name} (daily cap full)`));
    assert.equal(w.partners[0].server!.received.length, 10);
    // A lead refused at reservation made no attempt.
    const attempts = await ta.db.selectFrom('lead_attempts').select('lead_id').execute();
    assert.equal(attempts.length, 10);
    assert.deepEqual(Object.values(await capCounters(ta)), [10]);
  });
});
