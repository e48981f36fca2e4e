// The routing engine end to end: pending leads in a real database, delivered by app.delivery.run
// to real loopback partner servers. Priority, weights, the waterfall, max_attempts, countries,
// working hours, flows that cannot route, overrides, resuming, and the lease as fencing token.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { insertAttempt } from '../../../test/fixtures.js';
import { insertPendingLead, makeWorld, type WorldPartner } from '../../../test/distribution-world.js';
import { buildTestApp, call, forEachDatabase, getJson, type Engine, type TestApp } from '../../../test/helpers.js';
import { gated, rejecting, slow, type TestPartner } from '../../../test/partner-server.js';

const PAYOUT = { model: 'cpl', amount: 12.5 };

async function setup(
  t: TestContext,
  engine: Engine,
  partners: WorldPartner[],
  opts: { maxAttempts?: number; campaign?: Record<string, unknown> } = {},
) {
  const ta = await buildTestApp(t, engine);
  const w = await makeWorld(t, ta, partners, { ...opts, campaign: { payout: PAYOUT, ...opts.campaign } });
  const lead = (over = {}) => insertPendingLead(ta, w, over);
  return { ta, w, lead, run: (id: string, override = {}) => ta.app.delivery.run(id, override) };
}

const leadRow = (ta: TestApp, id: string) =>
  ta.db.selectFrom('leads').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const attempts = (ta: TestApp, id: string) =>
  ta.db.selectFrom('lead_attempts').selectAll().where('lead_id', '=', id).orderBy('attempt_no').execute();
const received = (p: { server: TestPartner | null }) => p.server!.received.length;

async function patch(ta: TestApp, url: string, payload: object) {
  const res = await call(ta.app, ta.ownerToken, { method: 'PATCH', url, payload });
  assert.equal(res.statusCode, 200, res.body);
}

/**
 * Working hours are judged at one fixed instant (mocked Date, which the engine reads too):
 * Monday 2026-06-15, 12:30 in Europe/Berlin (summer time, UTC+2). The schedules below change at
 * 11:00 and 15:00 only. Returns the zone and today's and yesterday's ISO weekdays there.
 */
function noonZone(t: TestContext) {
  t.mock.timers.enable({ apis: ['Date'], now: Date.parse('2026-06-15T10:30:00.000Z') });
  const today = 1;
  return { zone: 'Europe/Berlin', today, yesterday: 7, others: [2, 3, 4, 5, 6, 7] };
}

forEachDatabase('distribution engine', (engine) => {
  test('priority: the first priority takes every lead it accepts; the lead is delivered in full', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{}, {}]);
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(await lead());
    for (const id of ids) assert.deepEqual((await run(id)).status, 'delivered');
    assert.equal(received(w.partners[0]), 5);
    assert.equal(received(w.partners[1]), 0);

    const row = await leadRow(ta, ids[0]);
    const answer = w.partners[0].server!.received[0];
    assert.equal(answer.json.clickId, ids[0]);
    assert.equal(row.status, 'delivered');
    assert.equal(row.partner_id, w.partners[0].id);
    assert.match(row.partner_lead_id!, /^P-\d+$/);
    assert.equal(
      row.autologin_url,
      `https://broker.example/login/${row.partner_lead_id}?email=${encodeURIComponent(row.email)}`,
    );
    assert.equal(row.cost_cents, 1250); // cpl payout
    assert.equal(row.flow_id, w.flowId);
    assert.equal(row.reason, null);
    assert.equal(row.lease_until, null);
    assert.ok(row.delivered_at && row.status_updated_at === row.delivered_at);
    const [a] = await attempts(ta, ids[0]);
    assert.equal(a.outcome, 'accepted');
    assert.equal(a.http_status, 200);
    assert.equal(a.attempt_no, 1);
    assert.ok(a.response_excerpt!.includes(row.partner_lead_id!));
  });

  test('weights: within one priority leads split by weight (1:3 over 400 leads, within 5 sigma)', async (t) => {
    const { w, lead, run } = await setup(t, engine, [
      { target: { priority: 1, weight: 1 } },
      { target: { priority: 1, weight: 3 } },
    ]);
    const ids = [];
    for (let i = 0; i < 400; i++) ids.push(await lead());
    for (let i = 0; i < ids.length; i += 20) {
      const outcomes = await Promise.all(ids.slice(i, i + 20).map((id) => run(id)));
      assert.ok(outcomes.every((o) => o.status === 'delivered'));
    }
    const heavy = received(w.partners[1]);
    assert.equal(received(w.partners[0]) + heavy, 400);
    const sigma = Math.sqrt(400 * 0.75 * 0.25); // ≈ 8.7
    assert.ok(Math.abs(heavy - 300) <= 5 * sigma, `weight 3 got ${heavy} of 400`);
  });

  test('waterfall: rejected, then timed out, then accepted; every attempt recorded in order', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [
      { handler: rejecting(400, 'phone number invalid') },
      { handler: slow(), integration: { timeout_ms: 300 } },
      {},
    ]);
    const id = await lead();
    const outcome = await run(id);
    const row = await leadRow(ta, id);
    assert.equal(outcome.status, 'delivered');
    assert.equal(row.partner_id, w.partners[2].id);
    assert.equal(outcome.autologin_url, row.autologin_url);
    assert.ok(row.autologin_url!.startsWith(`https://broker.example/login/${row.partner_lead_id}`));
    const list = await attempts(ta, id);
    assert.deepEqual(
      list.map((a) => [a.attempt_no, a.partner_id, a.outcome, a.http_status]),
      [
        [1, w.partners[0].id, 'rejected', 400],
        [2, w.partners[1].id, 'timeout', null],
        [3, w.partners[2].id, 'accepted', 200],
      ],
    );
    assert.match(list[0].reason!, /phone number invalid/);
    assert.ok(list[1].duration_ms! >= 300, `timeout after ${list[1].duration_ms} ms`);
    assert.ok(list[0].requested_at <= list[1].requested_at && list[1].requested_at <= list[2].requested_at);

    // The operator sees the same on the lead's page.
    const detail = await getJson(ta, `/api/leads/${id}`);
    assert.equal(detail.status, 'delivered');
    assert.deepEqual(
      detail.attempts.map((a: any) => [a.partner_name, a.outcome]),
      [
        [w.partners[0].name, 'rejected'],
        [w.partners[1].name, 'timeout'],
        [w.partners[2].name, 'accepted'],
      ],
    );
  });

  test('max_attempts stops the waterfall; the reason names the partners tried and why', async (t) => {
    const { ta, w, lead, run } = await setup(
      t,
      engine,
      [{ handler: rejecting(200, 'duplicate in broker CRM') }, { handler: rejecting(422, 'country closed') }, {}],
      { maxAttempts: 2 },
    );
    const id = await lead();
    const outcome = await run(id);
    assert.equal(outcome.status, 'rejected');
    assert.equal(received(w.partners[2]), 0);
    assert.equal((await attempts(ta, id)).length, 2);
    const [a, b] = w.partners;
    assert.match(
      outcome.reason!,
      new RegExp(
        `^Every partner tried declined: ${a.name} \\(.*duplicate in broker CRM.*\\), ${b.name} \\(.*422.*\\); 1 more not tried \\(at most 2 attempts per lead\\)$`,
      ),
    );
    const row = await leadRow(ta, id);
    assert.equal(row.status, 'rejected');
    assert.equal(row.reason, outcome.reason);
    assert.equal(row.partner_id, null);
    assert.equal(row.lease_until, null);
    assert.equal(row.cost_cents, 0);
    // On the lead's page too, with its attempts.
    const detail = await getJson(ta, `/api/leads/${id}`);
    assert.equal(detail.reason, outcome.reason);
    assert.deepEqual(
      detail.attempts.map((x: any) => x.outcome),
      ['rejected', 'rejected'],
    );
  });

  test('countries: a partner must take the country, and a target can only narrow it', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [
      { fields: { countries: ['FR'] } },
      { target: { countries: ['AT'] } },
      { fields: { countries: ['AT'] }, target: { countries: ['DE'] } }, // cannot widen to DE
      { fields: { countries: ['AT', 'CH'] } },
    ]);
    const [fr, narrowed, widened, atch] = w.partners;
    const de = await run(await lead({ country: 'DE' }));
    assert.equal(de.status, 'rejected');
    assert.equal(
      de.reason,
      `No eligible partner: ${fr.name} (does not take DE), ${narrowed.name} (does not take DE in this flow), ${widened.name} (does not take DE), ${atch.name} (does not take DE)`,
    );
    const at = await lead({ country: 'AT' });
    assert.equal((await run(at)).status, 'delivered');
    assert.equal((await leadRow(ta, at)).partner_id, narrowed.id);
    const ch = await lead({ country: 'CH' });
    assert.equal((await run(ch)).status, 'delivered');
    assert.equal((await leadRow(ta, ch)).partner_id, atch.id);
    assert.equal(received(fr) + received(widened), 0);
  });

  test('working hours: partner hours, a target schedule overriding them, midnight spans, all-day', async (t) => {
    const { zone, today, yesterday, others } = noonZone(t);
    const hours = (days: number[], from: string, to: string) => ({ timezone: zone, days, from, to });
    const { ta, w, lead, run } = await setup(t, engine, [
      { fields: { working_hours: hours([today], '15:00', '18:00') } }, // later today
      { fields: { working_hours: hours(others, '00:00', '00:00') } }, // every other day
      { fields: { working_hours: hours([today], '16:00', '15:00') } }, // opens tonight
      { fields: { working_hours: hours([1, 2, 3, 4, 5, 6, 7], '09:00', '11:00') } }, // closed since 11:00
      {
        fields: { working_hours: hours([1, 2, 3, 4, 5, 6, 7], '09:00', '18:00') },
        target: { schedule: hours(others, '09:00', '18:00') },
      },
    ]);
    const first = await run(await lead());
    assert.equal(first.status, 'rejected');
    assert.equal(
      first.reason,
      `No eligible partner: ${w.partners.map((p) => `${p.name} (outside working hours)`).join(', ')}`,
    );

    // Each of these is open now: from < to, from == to (all day), yesterday's span past midnight.
    for (const [i, open] of [
      hours([today], '11:00', '15:00'),
      hours([today], '07:30', '07:30'),
      hours([yesterday], '16:00', '15:00'),
    ].entries()) {
      await patch(ta, `/api/partners/${w.partners[i].id}`, { working_hours: open });
      const id = await lead();
      assert.equal((await run(id)).status, 'delivered', `schedule ${JSON.stringify(open)}`);
      assert.equal((await leadRow(ta, id)).partner_id, w.partners[i].id);
      await patch(ta, `/api/partners/${w.partners[i].id}`, { status: 'paused' });
    }
    // A target schedule open now wins over the partner's own hours (closed since 11:00).
    await patch(ta, `/api/flows/${w.flowId}`, {
      targets: w.partners.map((p, i) => ({
        partner_id: p.id,
        priority: i + 1,
        schedule: i === 3 ? hours([today], '11:00', '15:00') : null,
      })),
    });
    const id = await lead();
    assert.equal((await run(id)).status, 'delivered');
    assert.equal((await leadRow(ta, id)).partner_id, w.partners[3].id);
  });

  test('flows that cannot route: no flow, a paused flow, only paused partners, an empty flow', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{ fields: { status: 'paused' } }, {}]);
    const campaign = await getJson(ta, `/api/campaigns/${w.campaignId}`);

    // A paused partner is skipped: the next one takes the lead.
    const id = await lead();
    assert.equal((await run(id)).status, 'delivered');
    assert.equal((await leadRow(ta, id)).partner_id, w.partners[1].id);
    assert.equal(received(w.partners[0]), 0);

    await patch(ta, `/api/partners/${w.partners[1].id}`, { status: 'paused' });
    const paused = await run(await lead());
    assert.equal(paused.reason, `No eligible partner: ${w.partners[0].name} (paused), ${w.partners[1].name} (paused)`);

    await patch(ta, `/api/flows/${w.flowId}`, { targets: [] });
    assert.equal((await run(await lead())).reason, 'No eligible partner: the flow has no partners');

    await patch(ta, `/api/flows/${w.flowId}`, { status: 'paused' });
    const flow = await getJson(ta, `/api/flows/${w.flowId}`);
    const pausedFlow = await run(await lead());
    assert.deepEqual(pausedFlow, { status: 'rejected', autologin_url: null, reason: `Flow ${flow.name} is paused` });

    await patch(ta, `/api/campaigns/${w.campaignId}`, { flow_id: null });
    const noFlow = await lead({ flow_id: null });
    const before = new Date().toISOString();
    assert.deepEqual(await run(noFlow), {
      status: 'rejected',
      autologin_url: null,
      reason: `Campaign ${campaign.name} has no flow`,
    });
    const row = await leadRow(ta, noFlow);
    assert.equal(row.status, 'rejected');
    assert.equal(row.flow_id, null);
    assert.equal(row.lease_until, null);
    assert.ok(row.status_updated_at >= before);
  });

  test('overrides: one partner directly (one attempt), another flow; a lead not pending is left alone', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{}, { handler: rejecting(400, 'no') }]);
    const [good, bad] = w.partners;

    // Directly to the rejecting partner: one attempt, no fallback to the flow's other partner.
    const direct = await lead();
    const outcome = await run(direct, { partnerId: bad.id });
    assert.equal(outcome.status, 'rejected');
    assert.match(outcome.reason!, new RegExp(`^Every partner tried declined: ${bad.name} \\(`));
    assert.equal(received(good), 0);
    assert.equal((await leadRow(ta, direct)).flow_id, w.flowId); // no flow used: unchanged

    // Through another flow: the lead records the flow it went through.
    const res = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/flows',
      payload: { name: 'Other', targets: [{ partner_id: good.id, priority: 1 }] },
    });
    assert.equal(res.statusCode, 201, res.body);
    const viaOther = await lead();
    assert.equal((await run(viaOther, { flowId: res.json().id })).status, 'delivered');
    assert.equal((await leadRow(ta, viaOther)).flow_id, res.json().id);

    // Already delivered: answered as it is, nobody called.
    const before = received(good);
    assert.equal((await run(viaOther)).status, 'delivered');
    assert.equal(received(good), before);
  });

  test('resume: partners already offered are skipped and count toward max_attempts', async (t) => {
    const { ta, w, lead, run } = await setup(t, engine, [{}, {}, {}], { maxAttempts: 2 });
    const [a, b, c] = w.partners;
    const id = await lead();
    await insertAttempt(ta.db, { lead_id: id, partner_id: a.id, attempt_no: 1, outcome: 'rejected', http_status: 400 });
    assert.equal((await run(id, { resume: true })).status, 'delivered');
    assert.equal(received(a), 0);
    assert.deepEqual(
      (await attempts(ta, id)).map((x) => [x.attempt_no, x.partner_id, x.outcome]),
      [
        [1, a.id, 'rejected'],
        [2, b.id, 'accepted'],
      ],
    );

    const spent = await lead();
    await insertAttempt(ta.db, { lead_id: spent, partner_id: a.id, attempt_no: 1, outcome: 'timeout' });
    await insertAttempt(ta.db, { lead_id: spent, partner_id: b.id, attempt_no: 2, outcome: 'error' });
    const outcome = await run(spent, { resume: true });
    assert.equal(outcome.status, 'rejected');
    assert.equal(received(c), 0);
    assert.match(outcome.reason!, /1 more not tried \(at most 2 attempts per lead\); not eligible: .*already offered/);
  });

  test('the lease fences the delivery: taken over during a call, the engine writes nothing more', async (t) => {
    // The partner holds the call until the takeover below is written: the call is in flight by construction.
    const partner = gated(t);
    const { ta, lead, run } = await setup(t, engine, [{ handler: partner.handler }]);
    const id = await lead();
    const delivering = run(id);
    await partner.arrived;
    // What the recovery sweep does to a lead it claimed whose call was in flight.
    await ta.db
      .updateTable('lead_attempts')
      .set({ outcome: 'error', reason: 'taken over' })
      .where('lead_id', '=', id)
      .execute();
    await ta.db
      .updateTable('leads')
      .set({ status: 'failed', reason: 'interrupted', lease_until: null })
      .where('id', '=', id)
      .execute();
    partner.release();
    const outcome = await delivering;
    assert.deepEqual(outcome, { status: 'failed', autologin_url: null, reason: 'interrupted' });
    const row = await leadRow(ta, id);
    assert.equal(row.partner_id, null);
    assert.equal((await attempts(ta, id))[0].outcome, 'error');
  });
});
