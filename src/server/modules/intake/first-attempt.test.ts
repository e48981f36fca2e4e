// A new lead whose delivery needs nothing more from the database is stored with its first
// attempt (distribution/route.ts planAtIntake, engine.ts firstAttempt): the waterfall, the lease
// and the caps behave exactly as a delivery that plans after the lead is stored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, forEachDatabase, type TestApp } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { gated, rejecting } from '../../../../test/partner-server.js';

const attemptsOf = (ta: TestApp, leadId: string) =>
  ta.db
    .selectFrom('lead_attempts')
    .select(['partner_id', 'attempt_no', 'outcome'])
    .where('lead_id', '=', leadId)
    .orderBy('attempt_no')
    .execute();

forEachDatabase('Intake: the first attempt stored with the lead', (engine) => {
  test('a partner that declines the stored first attempt hands the lead on down the waterfall', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{ handler: rejecting() }, {}]);
    const res = await postLead(ta, w.token, sampleLead());
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'delivered');
    assert.deepEqual(await attemptsOf(ta, res.json().id), [
      { partner_id: w.partners[0].id, attempt_no: 1, outcome: 'rejected' },
      { partner_id: w.partners[1].id, attempt_no: 2, outcome: 'accepted' },
    ]);
    const lead = await ta.db
      .selectFrom('leads')
      .select(['partner_id', 'lease_until', 'cost_cents'])
      .where('id', '=', res.json().id)
      .executeTakeFirstOrThrow();
    assert.deepEqual(lead, { partner_id: w.partners[1].id, lease_until: null, cost_cents: 1000 });
  });

  test("while the first call waits, the attempt is in flight and the lead leased past the call's timeout", async (t) => {
    const ta = await buildTestApp(t, engine);
    const partner = gated(t);
    // 50 s: longer than intake's own first lease (30 s), so the stored lease must cover the call.
    const w = await makeWorld(t, ta, [{ handler: partner.handler, integration: { timeout_ms: 50_000 } }]);
    const before = Date.now();
    const posted = postLead(ta, w.token, sampleLead());
    await partner.arrived;
    const lead = await ta.db
      .selectFrom('leads')
      .select(['id', 'status', 'lease_until'])
      .where('campaign_id', '=', w.campaignId)
      .executeTakeFirstOrThrow();
    assert.equal(lead.status, 'pending');
    assert.ok(
      Date.parse(lead.lease_until!) >= before + 50_000 + 5_000,
      `lease ${lead.lease_until} covers the call and the answer's recording`,
    );
    assert.deepEqual(await attemptsOf(ta, lead.id), [
      { partner_id: w.partners[0].id, attempt_no: 1, outcome: 'in_flight' },
    ]);
    partner.release();
    const res = await posted;
    assert.equal(res.json().status, 'delivered', res.body);
    assert.deepEqual(await attemptsOf(ta, lead.id), [
      { partner_id: w.partners[0].id, attempt_no: 1, outcome: 'accepted' },
    ]);
  });

  test('a capped partner is planned after the lead is stored: its cap is reserved, and a full cap skips it', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{ fields: { daily_cap: 1 } }, {}]);
    const first = (await postLead(ta, w.token, sampleLead())).json();
    const second = (await postLead(ta, w.token, sampleLead())).json();
    assert.deepEqual([first.status, second.status], ['delivered', 'delivered']);
    assert.deepEqual(
      (await attemptsOf(ta, first.id)).map((a) => a.partner_id),
      [w.partners[0].id],
    );
    assert.deepEqual(
      (await attemptsOf(ta, second.id)).map((a) => a.partner_id),
      [w.partners[1].id],
      'the capped partner took one lead only',
    );
    const used = await ta.db
      .selectFrom('cap_counters')
      .select('used')
      .where('scope', '=', `partner:${w.partners[0].id}`)
      .execute();
    assert.deepEqual(used, [{ used: 1 }]);
  });
});
