// Issue 15's end-to-end case, on both engines: a lead posted by a provider and delivered to a
// partner that never sends a postback is marked FTD by the next status pull; the provider's
// tracker receives the FTD postback with the payout; a subscribed webhook receives a correctly
// signed event; the partner's cap filling up shows as a notification. Real loopback servers
// for the partner, its status API, the tracker and the webhook receiver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildTestApp, call, forEachDatabase, getJson } from './helpers.js';
import { makeWorld, postLead, sampleLead } from './distribution-world.js';
import { json, startPartner } from './partner-server.js';
import { startReceiver, verifySignature } from './webhook-receiver.js';

forEachDatabase('the conversion loop', (engine) => {
  test('delivered → pulled FTD → postback with payout, signed webhook, cap notification', async (t) => {
    const ta = await buildTestApp(t, engine);
    const deposits = new Set<string>();
    const statusApi = await startPartner(t, (_req, res) =>
      json(res, 200, {
        data: [...deposits].map((id) => ({ id, status: 'FTD', deposit_date: '2026-11-25T08:00:00Z' })),
      }),
    );
    const tracker = await startReceiver(t);
    const receiver = await startReceiver(t);
    const w = await makeWorld(t, ta, [{ fields: { daily_cap: 1 } }], {
      campaign: { payout: { model: 'cpa', amount: 45 } },
    });
    const partner = w.partners[0];
    const put = (url: string, payload: Record<string, unknown>) =>
      call(ta.app, ta.ownerToken, { method: 'PUT', url, payload });
    const pull = {
      url: `${statusApi.url}?since={{from}}`,
      list_path: 'data',
      lead_id_path: 'id',
      status_path: 'status',
      ftd_path: 'deposit_date',
      interval_minutes: 1,
      lookback_hours: 24,
      status_map: { FTD: { sale_status: 'Deposited', ftd: true } },
    };
    // Saved disabled, previewed by a dry run, then on schedule: no live pull before a preview.
    assert.equal((await put(`/api/partners/${partner.id}/status-pull`, pull)).statusCode, 200);
    const dry = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/partners/${partner.id}/status-pull/run`,
      payload: { dry_run: true },
    });
    assert.equal(dry.statusCode, 200, dry.body);
    assert.equal((await put(`/api/partners/${partner.id}/status-pull`, { ...pull, enabled: true })).statusCode, 200);
    assert.equal(
      (
        await put(`/api/traffic-providers/${w.providerId}/postbacks`, {
          postbacks: [
            {
              event_type: 'lead.ftd',
              campaign_id: null,
              url: `${tracker.url}?click={sub_id1}&payout={payout}&status={sale_status}`,
            },
          ],
        })
      ).statusCode,
      200,
    );
    const hook = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/webhooks',
      payload: { name: 'CRM', url: receiver.url, event_types: ['lead.ftd'] },
    });
    assert.equal(hook.statusCode, 201, hook.body);
    const secret = hook.json().secret;

    // The provider posts a lead; the partner takes it (and so fills its daily cap of 1).
    const posted = await postLead(ta, w.token, sampleLead({ sub_id1: 'aff-click-77' }));
    assert.equal(posted.json().status, 'delivered', posted.body);
    const leadId = posted.json().id;
    const notes = await getJson(ta, '/api/notifications');
    assert.deepEqual(
      notes.data.map((n: { type: string }) => n.type),
      ['partner.cap_full'],
    );
    assert.equal(notes.unread_count, 1);

    // The partner never posts back; its status API lists the lead as deposited; the next pull marks it FTD.
    const { partner_lead_id } = await ta.db
      .selectFrom('leads')
      .select('partner_lead_id')
      .where('id', '=', leadId)
      .executeTakeFirstOrThrow();
    deposits.add(partner_lead_id!);
    assert.equal(await ta.app.statusPull.runDue(), 1);
    const lead = await getJson(ta, `/api/leads/${leadId}`);
    assert.equal(lead.ftd_at, '2026-11-25T08:00:00.000Z');
    assert.equal(lead.sale_status, 'Deposited');
    assert.deepEqual(
      lead.status_history.map((h: { source: string }) => h.source),
      ['pull'],
    );

    // The outbox sends the FTD to the provider's tracker and to the webhook.
    await ta.app.events.drain();
    assert.equal(tracker.received.length, 1);
    const q = new URL(tracker.received[0].url, 'http://x').searchParams;
    assert.deepEqual([q.get('click'), q.get('payout'), q.get('status')], ['aff-click-77', '45.00', 'Deposited']);
    assert.equal(receiver.received.length, 1);
    const event = receiver.received[0];
    assert.ok(verifySignature(secret, event.headers, event.body), 'the webhook event is correctly signed');
    assert.equal(event.json.type, 'lead.ftd');
    assert.equal(event.json.data.lead_id, leadId);
    assert.equal(event.json.data.ftd_at, '2026-11-25T08:00:00.000Z');
  });
});
