import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, expectProblem, forEachDatabase, getJson, type TestApp } from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { rejecting } from '../../../../test/partner-server.js';
import { startReceiver } from '../../../../test/webhook-receiver.js';
import { syncPostbackSubscriptions } from './queries.js';

const put = (ta: TestApp, providerId: string, postbacks: unknown[]) =>
  call(ta.app, ta.ownerToken, {
    method: 'PUT',
    url: `/api/traffic-providers/${providerId}/postbacks`,
    payload: { postbacks },
  });

forEachDatabase('provider postbacks', (engine) => {
  test("a provider's tracker gets the delivered and FTD postbacks with their macros filled, and never a partner's name", async (t) => {
    const ta = await buildTestApp(t, engine);
    const tracker = await startReceiver(t);
    const w = await makeWorld(t, ta, [{ fields: { name: 'Secret Broker Ltd' } }], {
      campaign: { payout: { model: 'cpa', amount: 40 } },
    });
    const base = tracker.url.replace('/leads', '/pb');
    const set = await put(ta, w.providerId, [
      {
        event_type: 'lead.delivered',
        campaign_id: null,
        url: `${base}?e={event}&click={sub_id1}&lead={lead_id}&status={status}&c={country}&camp={campaign_id}`,
      },
      {
        event_type: 'lead.ftd',
        campaign_id: null,
        url: `${base}?e={event}&click={sub_id1}&payout={payout}&ftd={ftd_at}&sale={sale_status}`,
      },
    ]);
    assert.equal(set.statusCode, 200, set.body);
    assert.equal(set.json().postbacks.length, 2);

    const res = await postLead(ta, w.token, sampleLead({ sub_id1: 'clk 42&x' }));
    const leadId = res.json().id;
    await ta.app.events.drain();
    assert.equal(tracker.received.length, 1);
    const delivered = new URL(tracker.received[0].url, 'http://x');
    assert.equal(tracker.received[0].method, 'GET');
    assert.deepEqual(Object.fromEntries(delivered.searchParams), {
      e: 'lead.delivered',
      click: 'clk 42&x',
      lead: leadId,
      status: 'delivered',
      c: 'DE',
      camp: w.campaignId,
    });

    // The partner reports the FTD by its postback: the provider's tracker hears of it with the payout.
    const partner = w.partners[0];
    const lead = await ta.db
      .selectFrom('leads')
      .select('partner_lead_id')
      .where('id', '=', leadId)
      .executeTakeFirstOrThrow();
    const ftd = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${partner.postbackToken}?partner_lead_id=${lead.partner_lead_id}&ftd=1&sale_status=Deposited`,
    });
    assert.equal(ftd.statusCode, 200, ftd.body);
    await ta.app.events.drain();
    assert.equal(tracker.received.length, 2);
    const got = new URL(tracker.received[1].url, 'http://x').searchParams;
    assert.equal(got.get('e'), 'lead.ftd');
    assert.equal(got.get('click'), 'clk 42&x');
    assert.equal(got.get('payout'), '40.00');
    assert.equal(got.get('sale'), 'Deposited');
    assert.match(got.get('ftd')!, /^\d{4}-\d\d-\d\dT/);
    for (const r of tracker.received)
      assert.ok(!r.url.includes('Secret') && !r.url.includes(partner.id), 'no partner in a postback');

    const log = await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks/deliveries`);
    assert.deepEqual(
      log.data.map((d: any) => [d.event_type, d.state]),
      [
        ['lead.ftd', 'delivered'],
        ['lead.delivered', 'delivered'],
      ],
    );
    const detail = await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks/deliveries/${log.data[0].id}`);
    assert.match(detail.payload, /^http:\/\/127\.0\.0\.1:\d+\/pb\?e=lead\.ftd/);
    assert.equal(detail.tries[0].http_status, 200);
  });

  test('a redelivered lead rejected again sends no second "rejected" postback; its later delivery sends one', async (t) => {
    const ta = await buildTestApp(t, engine);
    const tracker = await startReceiver(t);
    const w = await makeWorld(t, ta, [{ handler: rejecting() }]);
    const taker = await makeWorld(t, ta, [{}]);
    const base = tracker.url.replace('/leads', '/pb');
    const set = await put(
      ta,
      w.providerId,
      ['lead.rejected', 'lead.delivered'].map((event_type) => ({
        event_type,
        campaign_id: null,
        url: `${base}?e={event}&lead={lead_id}`,
      })),
    );
    assert.equal(set.statusCode, 200, set.body);
    const leadId = (await postLead(ta, w.token, sampleLead())).json().id;
    await ta.app.events.drain();
    const events = () => tracker.received.map((r) => new URL(r.url, 'http://x').searchParams.get('e'));
    assert.deepEqual(events(), ['lead.rejected']);

    // Redelivered through its own flow, refused again: the tracker hears nothing new.
    const redeliver = (payload: object) =>
      call(ta.app, ta.ownerToken, { method: 'POST', url: `/api/leads/${leadId}/redeliver`, payload });
    const again = await redeliver({});
    assert.equal(again.json().status, 'rejected', again.body);
    await ta.app.events.drain();
    assert.deepEqual(events(), ['lead.rejected'], 'one "rejected" postback per lead');
    const log = await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks/deliveries`);
    assert.deepEqual(
      log.data.map((d: any) => [d.event_type, d.state]),
      [
        ['lead.rejected', 'cancelled'],
        ['lead.rejected', 'delivered'],
      ],
    );

    // Redelivered to a partner that takes it: a new status, so its postback goes out.
    const taken = await redeliver({ partner_id: taker.partners[0].id });
    assert.equal(taken.json().status, 'delivered', taken.body);
    await ta.app.events.drain();
    assert.deepEqual(events(), ['lead.rejected', 'lead.delivered']);
    assert.ok(tracker.received.every((r) => r.url.includes(`lead=${leadId}`)));
  });

  test("a campaign's own postback replaces the provider-wide one for its leads only", async (t) => {
    const ta = await buildTestApp(t, engine);
    const tracker = await startReceiver(t);
    const w = await makeWorld(t, ta, [{}]);
    const other = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/campaigns',
      payload: {
        name: 'Other',
        traffic_provider_id: w.providerId,
        flow_id: w.flowId,
        payout: { model: 'cpl', amount: 5 },
      },
    });
    const base = tracker.url.replace('/leads', '');
    assert.equal(
      (
        await put(ta, w.providerId, [
          { event_type: 'lead.delivered', campaign_id: null, url: `${base}/wide?l={lead_id}` },
          { event_type: 'lead.delivered', campaign_id: other.json().id, url: `${base}/own?l={lead_id}&p={payout}` },
        ])
      ).statusCode,
      200,
    );
    assert.equal((await postLead(ta, w.token, sampleLead({ campaign_id: w.campaignId }))).statusCode, 201);
    assert.equal((await postLead(ta, w.token, sampleLead({ campaign_id: other.json().id }))).statusCode, 201);
    await ta.app.events.drain();
    assert.deepEqual(tracker.received.map((r) => r.url.split('?')[0]).sort(), ['/own', '/wide']);
    assert.match(
      tracker.received.find((r) => r.url.startsWith('/own'))!.url,
      /p=5\.00/,
      "the campaign's CPL payout, recorded at delivery",
    );
  });

  test('bad postbacks are named by field; a test postback calls the tracker once and says what it answered', async (t) => {
    const ta = await buildTestApp(t, engine);
    const tracker = await startReceiver(t);
    const w = await makeWorld(t, ta, [{}]);
    const foreign = await makeWorld(t, ta, [{}]);
    const bad = await put(ta, w.providerId, [
      { event_type: 'lead.ftd', campaign_id: null, url: 'https://t.example/pb?p={partner_name}' },
      { event_type: 'lead.ftd', campaign_id: null, url: 'https://t.example/pb' },
      { event_type: 'lead.delivered', campaign_id: foreign.campaignId, url: 'https://{sub_id1}.example/pb' },
      { event_type: 'lead.rejected', campaign_id: null, url: 'http://192.168.1.10/pb' },
    ]);
    const errors = expectProblem(bad, 400, 'validation_failed').errors!;
    const byField = Object.fromEntries(errors.map((e) => [e.field, e.message]));
    assert.match(byField['postbacks/0/url'], /unknown macro \{partner_name\}/);
    assert.match(byField['postbacks/1'], /second postback for lead\.ftd/);
    assert.match(byField['postbacks/2/campaign_id'], /not one of this traffic provider's campaigns/);
    assert.match(byField['postbacks/2/url'], /scheme, host or port/);
    assert.match(byField['postbacks/3/url'], /192\.168\.1\.10/);
    assert.deepEqual(
      (await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks`)).postbacks,
      [],
      'nothing stored',
    );

    expectProblem(
      await call(ta.app, ta.ownerToken, {
        method: 'POST',
        url: `/api/traffic-providers/${w.providerId}/postbacks/test`,
        payload: { event_type: 'lead.ftd' },
      }),
      409,
      'conflict',
    );
    await put(ta, w.providerId, [
      { event_type: 'lead.ftd', campaign_id: null, url: `${tracker.url}?p={payout}&click={sub_id1}` },
    ]);
    tracker.answer(404);
    const tried = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${w.providerId}/postbacks/test`,
      payload: { event_type: 'lead.ftd' },
    });
    assert.equal(tried.statusCode, 200, tried.body);
    assert.equal(tried.json().ok, false);
    assert.equal(tried.json().http_status, 404);
    assert.match(tried.json().url, /p=12\.50&click=click-123$/);
    assert.equal(tracker.received.length, 1);
    const audit = await getJson(ta, '/api/audit-log?action=traffic_provider.postbacks_updated');
    assert.equal(audit.data.length, 1);
  });
});

forEachDatabase('provider postbacks: where they go', (engine) => {
  test("a lead's macro never chooses the tracker's scheme, host or port: backslash and userinfo spellings are refused at save, and a stored one is never sent", async (t) => {
    const ta = await buildTestApp(t, engine);
    const tracker = await startReceiver(t);
    const port = new URL(tracker.url).port;
    const w = await makeWorld(t, ta, [{}]);
    const spellings = [
      'http:\\\\{sub_id2}/pb',
      `http:\\\\x@{sub_id2}.:${port}/x`,
      'http:/{sub_id2}/pb',
      `http:{sub_id2}//127.0.0.1:${port}/pb`,
      '{sub_id2}://t.example/pb',
      'https://t.example:{sub_id2}/pb',
    ];
    const bad = await put(
      ta,
      w.providerId,
      spellings.map((url, i) => ({
        event_type: [
          'lead.received',
          'lead.delivered',
          'lead.rejected',
          'lead.failed',
          'lead.ftd',
          'lead.sale_status_changed',
        ][i],
        campaign_id: null,
        url,
      })),
    );
    const errors = expectProblem(bad, 400, 'validation_failed').errors!;
    assert.deepEqual(
      errors.map((e) => e.field).sort(),
      spellings.map((_, i) => `postbacks/${i}/url`),
    );
    for (const e of errors) assert.match(e.message, /scheme, host or port|not a URL/, e.message);
    assert.deepEqual(
      (await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks`)).postbacks,
      [],
      'nothing stored',
    );

    // A template stored before this check: the lead's sub_id2 would name the tracker's own
    // address; the delivery is cancelled with the reason and nothing is sent.
    await ta.db
      .insertInto('provider_postbacks')
      .values({
        id: 'legacy-pb',
        traffic_provider_id: w.providerId,
        campaign_id: null,
        event_type: 'lead.delivered',
        url: spellings[1],
        created_at: new Date().toISOString(),
      })
      .execute();
    await syncPostbackSubscriptions(ta.db, w.providerId);
    assert.equal((await postLead(ta, w.token, sampleLead({ sub_id2: '127.0.0.1' }))).statusCode, 201);
    await ta.app.events.drain();
    assert.equal(tracker.received.length, 0, 'the lead chose no host');
    const log = await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks/deliveries`);
    assert.deepEqual(
      log.data.map((d: any) => d.state),
      ['cancelled'],
    );
    const detail = await getJson(ta, `/api/traffic-providers/${w.providerId}/postbacks/deliveries/${log.data[0].id}`);
    assert.match(JSON.stringify(detail), /scheme, host or port/);
    const tried = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/traffic-providers/${w.providerId}/postbacks/test`,
      payload: { event_type: 'lead.delivered' },
    });
    expectProblem(tried, 409, 'conflict');
    assert.equal(tracker.received.length, 0);
  });
});
