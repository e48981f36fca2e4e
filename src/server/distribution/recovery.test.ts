// The recovery sweep: pending leads whose lease ran out are resumed (skipping partners already
// offered) or, when a partner call was in flight, failed without being sent anywhere else. Two
// sweeps at once claim each lead once (on PostgreSQL from two connection pools).
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { insertAttempt } from '../../../test/fixtures.js';
import { insertPendingLead, makeWorld, secondRunner, type WorldPartner } from '../../../test/distribution-world.js';
import { buildTestApp, forEachDatabase, type Engine, type TestApp } from '../../../test/helpers.js';
import { accepting } from '../../../test/partner-server.js';
import { recoverStale } from './recovery.js';

const PAST = '2020-01-01T00:00:00.000Z';

async function setup(
  t: TestContext,
  engine: Engine,
  partners: WorldPartner[] = [{}],
  env: Record<string, string> = {},
) {
  const ta = await buildTestApp(t, engine, { env });
  const w = await makeWorld(t, ta, partners, { campaign: { payout: { model: 'cpl', amount: 3 } } });
  return { ta, w, stale: (over = {}) => insertPendingLead(ta, w, { lease_until: PAST, ...over }) };
}

const leadRow = (ta: TestApp, id: string) =>
  ta.db
    .selectFrom('leads')
    .select(['status', 'reason', 'partner_id', 'lease_until', 'email'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();

forEachDatabase('distribution recovery', (engine) => {
  test('a stale pending lead is resumed and delivered; a leased one is left to its owner', async (t) => {
    const { ta, w, stale } = await setup(t, engine);
    const expired = await stale();
    const unleased = await stale({ lease_until: null });
    const owned = await insertPendingLead(ta, w); // leased for another minute
    assert.deepEqual(await ta.app.delivery.sweep(), { resumed: 2, failed: 0 });
    for (const id of [expired, unleased]) {
      const row = await leadRow(ta, id);
      assert.equal(row.status, 'delivered');
      assert.equal(row.lease_until, null);
    }
    assert.equal((await leadRow(ta, owned)).status, 'pending');
    assert.equal(w.partners[0].server!.received.length, 2);
    // One summary line, and no lead contacts in the logs.
    const summary = ta.logs.filter((l) => l.includes('recovery sweep'));
    assert.equal(summary.length, 1);
    assert.match(summary[0], /"resumed":2,"failed":0/);
    const email = (await leadRow(ta, expired)).email;
    assert.ok(!ta.logs.some((l) => l.includes(email)));
  });

  test('resumed leads skip partners already offered', async (t) => {
    const { ta, w, stale } = await setup(t, engine, [{}, {}]);
    const id = await stale();
    await insertAttempt(ta.db, {
      lead_id: id,
      partner_id: w.partners[0].id,
      attempt_no: 1,
      outcome: 'timeout',
      http_status: null,
    });
    await ta.app.delivery.sweep();
    const row = await leadRow(ta, id);
    assert.equal(row.status, 'delivered');
    assert.equal(row.partner_id, w.partners[1].id);
    assert.equal(w.partners[0].server!.received.length, 0);
  });

  test('a lead whose partner call was in flight is failed, not sent elsewhere', async (t) => {
    const { ta, w, stale } = await setup(t, engine, [{}, {}]);
    const id = await stale();
    await insertAttempt(ta.db, {
      lead_id: id,
      partner_id: w.partners[0].id,
      attempt_no: 1,
      outcome: 'in_flight',
      http_status: null,
      duration_ms: null,
      response_excerpt: null,
    });
    assert.deepEqual(await ta.app.delivery.sweep(), { resumed: 0, failed: 1 });
    const row = await leadRow(ta, id);
    assert.equal(row.status, 'failed');
    assert.equal(row.lease_until, null);
    assert.equal(
      row.reason,
      `Delivery interrupted while ${w.partners[0].name} was being called; the partner may have registered it: check with them before redelivering.`,
    );
    const [attempt] = await ta.db
      .selectFrom('lead_attempts')
      .select(['outcome', 'reason'])
      .where('lead_id', '=', id)
      .execute();
    assert.deepEqual(attempt, {
      outcome: 'error',
      reason: "the server stopped while waiting for the partner's answer",
    });
    assert.equal(w.partners[0].server!.received.length + w.partners[1].server!.received.length, 0);
  });

  test('two sweeps at once claim each lead once', async (t) => {
    const { ta, w, stale } = await setup(t, engine, [{ handler: accepting(30) }]);
    const ids = [];
    for (let i = 0; i < 12; i++) ids.push(await stale());
    // On PostgreSQL the second sweep runs on its own pool, as another server process would.
    const other = await secondRunner(t, ta, engine);
    const [a, b] = await Promise.all([recoverStale(ta.app.delivery), recoverStale(other)]);
    assert.equal(a.resumed + b.resumed, 12);
    const sent = w.partners[0].server!.received.map((r) => r.json.clickId).sort();
    assert.deepEqual(sent, [...ids].sort());
    const attempts = await ta.db.selectFrom('lead_attempts').select('lead_id').execute();
    assert.equal(attempts.length, 12);
  });

  test('the sweep runs on its own every DELIVERY_RECOVERY_INTERVAL_MS', async (t) => {
    const { ta, stale } = await setup(t, engine, [{}], { DELIVERY_RECOVERY_INTERVAL_MS: '50' });
    const id = await stale();
    const deadline = Date.now() + 10_000;
    while ((await leadRow(ta, id)).status === 'pending' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    assert.equal((await leadRow(ta, id)).status, 'delivered');
  });
});
