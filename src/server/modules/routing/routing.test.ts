// The routing simulator: its verdicts are the ones real routing then records for the same lead,
// nothing is stored or called, and bad requests are named.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';

const simulate = (ta: TestApp, payload: object, token = ta.ownerToken) =>
  call(ta.app, token, { method: 'POST', url: '/api/routing/simulate', payload });

/** A schedule closed for the next two hours (UTC), whatever the time now, and an instant when it is open. */
function closedNow() {
  const hour = new Date();
  hour.setUTCMinutes(0, 0, 0);
  const h = hour.getUTCHours();
  const hh = (n: number) => `${String(n % 24).padStart(2, '0')}:00`;
  return {
    schedule: { timezone: 'UTC', days: [1, 2, 3, 4, 5, 6, 7], from: hh(h + 2), to: hh(h + 3) },
    openAt: new Date(hour.getTime() + 2.5 * 3_600_000),
  };
}

const counts = async (ta: TestApp) => {
  const n = async (table: 'leads' | 'lead_attempts' | 'cap_counters') =>
    Number(
      (
        await ta.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { leads: await n('leads'), attempts: await n('lead_attempts'), counters: await n('cap_counters') };
};

forEachDatabase('routing simulator', (engine) => {
  test('the simulator’s verdicts are what real routing records for the same lead; nothing stored, no partner called', async (t) => {
    const ta = await buildTestApp(t, engine);
    const { schedule, openAt: later } = closedNow();
    const w = await makeWorld(t, ta, [
      { fields: { countries: ['AT'] } }, // country
      { fields: { working_hours: schedule } }, // hours
      { fields: { status: 'paused' } }, // paused
      { target: { country_caps: { DE: 1 } } }, // full after one DE lead
      { target: { priority: 5, weight: 30 } },
      { target: { priority: 5, weight: 10 } },
    ]);
    const [pCountry, pHours, pPaused, pCapped, p5a, p5b] = w.partners;

    const first = await simulate(ta, { country: 'DE', campaign_id: w.campaignId });
    assert.equal(first.statusCode, 200, first.body);
    const s1 = first.json();
    assert.deepEqual(
      [s1.routable, s1.reason, s1.flow_id, s1.max_attempts, s1.campaign_id],
      [true, null, w.flowId, 3, w.campaignId],
    );
    assert.deepEqual(
      s1.candidates.map((c: any) => [c.partner_id, c.verdict, c.reason, c.share]),
      [
        [pCountry.id, 'country', 'does not take DE', null],
        [pHours.id, 'hours', 'outside working hours', null],
        [pPaused.id, 'paused', 'paused', null],
        [pCapped.id, 'offer', null, 1],
        [p5a.id, 'offer', null, 0.75], // priority 5: by weight, 30 of 40
        [p5b.id, 'offer', null, 0.25],
      ],
    );
    assert.deepEqual(await counts(ta), { leads: 0, attempts: 0, counters: 0 });
    for (const p of w.partners) assert.equal(p.server!.received.length, 0, 'no partner called');

    // The same lead for real: it goes to the capped partner, and records the same three verdicts.
    const res = await postLead(ta, w.token, sampleLead({ country: 'DE' }));
    assert.equal(res.statusCode, 201, res.body);
    const lead = await getJson(ta, `/api/leads/${res.json().id}`);
    assert.equal(lead.partner_id, pCapped.id);
    const skipped = s1.candidates
      .filter((c: any) => c.verdict !== 'offer')
      .map((c: any) => ({
        partner_id: c.partner_id,
        partner_name: c.partner_name,
        verdict: c.verdict,
        reason: c.reason,
        cap: c.cap,
      }));
    assert.deepEqual(
      lead.verdicts.filter((v: any) => v.verdict !== 'not_reached'),
      skipped,
    );
    // And the partners after the one that took it say so.
    assert.deepEqual(
      lead.verdicts
        .filter((v: any) => v.verdict === 'not_reached')
        .map((v: any) => [v.partner_id, v.reason])
        .sort(),
      [p5a, p5b].map((p) => [p.id, `not reached: ${pCapped.name} took the lead first`]).sort(),
    );

    // Now the capped partner is full: the simulator says so with the numbers, and real routing agrees.
    const s2 = (await simulate(ta, { country: 'DE', flow_id: w.flowId })).json();
    const capped = s2.candidates.find((c: any) => c.partner_id === pCapped.id);
    assert.deepEqual(
      [capped.verdict, capped.reason, capped.cap],
      [
        'cap_full',
        'daily cap for DE in this flow full',
        { kind: 'flow_country_daily', window: 'day', country: 'DE', counts: 'deliveries', used: 1, cap: 1 },
      ],
    );
    const second = await getJson(
      ta,
      `/api/leads/${(await postLead(ta, w.token, sampleLead({ country: 'DE' }))).json().id}`,
    );
    assert.ok([p5a.id, p5b.id].includes(second.partner_id));
    assert.deepEqual(
      second.verdicts.filter((v: any) => v.verdict !== 'not_reached').map((v: any) => [v.partner_id, v.verdict, v.cap]),
      s2.candidates.filter((c: any) => c.verdict !== 'offer').map((c: any) => [c.partner_id, c.verdict, c.cap]),
    );
    // An AT lead is not capped there, and the country partner takes AT.
    const at = (await simulate(ta, { country: 'AT', flow_id: w.flowId })).json();
    assert.deepEqual(
      at.candidates.filter((c: any) => c.verdict === 'offer').map((c: any) => c.partner_id),
      [pCountry.id, pCapped.id, p5a.id, p5b.id],
    );
    // With max_attempts 3, priority 5 comes after three offered partners: not tried.
    assert.deepEqual(
      at.candidates.filter((c: any) => c.priority === 5).map((c: any) => c.verdict),
      ['offer', 'offer'],
    );

    // At a time inside the closed schedule's window, the hours partner opens.
    const open = (await simulate(ta, { country: 'DE', flow_id: w.flowId, at: later.toISOString() })).json();
    assert.equal(open.at, later.toISOString());
    assert.equal(open.candidates.find((c: any) => c.partner_id === pHours.id).verdict, 'offer');
  });

  test('max attempts, a campaign that would refuse the lead, a paused flow, and bad requests', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}, {}, { target: { priority: 3 } }], {
      maxAttempts: 2,
      campaign: { countries: ['DE'] },
    });
    const s = (await simulate(ta, { country: 'DE', campaign_id: w.campaignId })).json();
    assert.deepEqual(
      s.candidates.map((c: any) => c.verdict),
      ['offer', 'offer', 'not_tried'],
    );
    assert.match(s.candidates[2].reason, /at most 2 attempts per lead/);

    const fr = (await simulate(ta, { country: 'FR', campaign_id: w.campaignId })).json();
    assert.deepEqual(
      [fr.routable, fr.reason],
      [false, `Campaign ${(await getJson(ta, `/api/campaigns/${w.campaignId}`)).name} does not accept FR leads`],
    );

    assert.equal(
      (
        await call(ta.app, ta.ownerToken, {
          method: 'PATCH',
          url: `/api/flows/${w.flowId}`,
          payload: { status: 'paused' },
        })
      ).statusCode,
      200,
    );
    const paused = (await simulate(ta, { country: 'DE', flow_id: w.flowId })).json();
    assert.equal(paused.routable, false);
    assert.match(paused.reason, /is paused/);

    const field = (res: Awaited<ReturnType<typeof simulate>>) =>
      expectProblem(res, 400, 'validation_failed').errors!.map((e) => e.field);
    assert.deepEqual(field(await simulate(ta, { country: 'DE' })), ['campaign_id']);
    assert.deepEqual(field(await simulate(ta, { country: 'DE', flow_id: w.flowId, campaign_id: w.campaignId })), [
      'flow_id',
    ]);
    assert.deepEqual(field(await simulate(ta, { country: 'de', flow_id: w.flowId })), ['country']);
    assert.deepEqual(field(await simulate(ta, { country: 'DE', flow_id: w.flowId, at: 'tomorrow' })), ['at']);
    expectProblem(await simulate(ta, { country: 'DE', flow_id: 'nope' }), 404, 'not_found');
    expectProblem(await simulate(ta, { country: 'DE', campaign_id: 'nope' }), 404, 'not_found');

    // flows:view reads the cap usage and a lead's verdicts, but a POST needs flows:edit.
    const viewer = await newOperator(ta, ['flows:view']);
    expectProblem(await simulate(ta, { country: 'DE', flow_id: w.flowId }, viewer.token), 403, 'forbidden');
    assert.equal((await call(ta.app, viewer.token, { method: 'GET', url: '/api/routing/cap-usage' })).statusCode, 200);
    expectProblem(
      await call(ta.app, (await newOperator(ta, ['leads:view'])).token, {
        method: 'GET',
        url: '/api/routing/cap-usage',
      }),
      403,
      'forbidden',
    );
  });
});
