import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import {
  buildTestApp,
  call,
  expectProblem,
  forEachDatabase,
  getJson,
  newOperator,
  type TestApp,
} from '../../../../test/helpers.js';
import { makeWorld, postLead, sampleLead } from '../../../../test/distribution-world.js';
import { startReceiver, verifySignature } from '../../../../test/webhook-receiver.js';
import { downUrl } from '../../../../test/partner-server.js';

async function createWebhook(ta: TestApp, body: Record<string, unknown>) {
  const res = await call(ta.app, ta.ownerToken, {
    method: 'POST',
    url: '/api/webhooks',
    payload: { name: 'Ops', ...body },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json() as { id: string; secret: string; url: string };
}

/** Makes every pending delivery due now (instead of waiting out the backoff). */
const dueNow = (ta: TestApp) =>
  ta.db
    .updateTable('event_deliveries')
    .set({ next_attempt_at: '2000-01-01T00:00:00.000Z' })
    .where('state', '=', 'pending')
    .execute();

forEachDatabase('webhooks', (engine) => {
  test('"send test event": one signed POST to the receiver now, its answer and time reported; nothing stored; webhooks:edit', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    const hook = await createWebhook(ta, { url: receiver.url, event_types: ['lead.delivered'] });
    const send = (id = hook.id, token = ta.ownerToken) =>
      call(ta.app, token, { method: 'POST', url: `/api/webhooks/${id}/test` });
    const res = await send();
    assert.equal(res.statusCode, 200, res.body);
    const result = res.json();
    assert.equal(result.ok, true);
    assert.equal(result.http_status, 200);
    assert.equal(result.error, null);
    assert.ok(Number.isInteger(result.duration_ms) && result.duration_ms >= 0);
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0];
    assert.equal(got.method, 'POST');
    assert.equal(got.headers['webhook-id'], result.event_id);
    assert.match(result.event_id, /^evt_test_/);
    assert.ok(verifySignature(hook.secret, got.headers, got.body), 'signed with the webhook secret');
    assert.ok(!verifySignature(`whsec_${randomBytes(32).toString('base64')}`, got.headers, got.body));
    const body = JSON.parse(got.body);
    assert.equal(body.type, 'webhook.test');
    assert.equal(body.data.webhook_id, hook.id);

    // The receiver's refusal is reported, not thrown.
    receiver.answer(503);
    const refused = (await send()).json();
    assert.deepEqual([refused.ok, refused.http_status, refused.error], [false, 503, 'HTTP 503']);
    assert.equal(receiver.received.length, 2);
    assert.equal((await ta.db.selectFrom('event_deliveries').select('id').execute()).length, 0, 'nothing stored');

    expectProblem(await send('no-such-webhook'), 404, 'not_found');
    const viewer = await newOperator(ta, ['webhooks:view', 'leads:view']);
    expectProblem(await send(hook.id, viewer.token), 403, 'forbidden');
    assert.equal(receiver.received.length, 2);
  });

  test('the secret is shown once, the URL masked past its origin; bad input is named by field', async (t) => {
    const ta = await buildTestApp(t, engine);
    const made = await createWebhook(ta, {
      url: 'https://hooks.example.com/services/T000/B000/abcdefghijkl',
      event_types: ['lead.ftd'],
    });
    assert.match(made.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(made.url, 'https://hooks.example.com/••••ijkl');
    const listed = await getJson(ta, '/api/webhooks');
    assert.equal(listed.data.length, 1);
    assert.ok(
      !JSON.stringify(listed).includes(made.secret) && !JSON.stringify(listed).includes('abcdefghijkl'),
      'no secret and no full URL in the list',
    );
    const one = await getJson(ta, `/api/webhooks/${made.id}`);
    assert.equal(one.secret, undefined);

    const bad = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/webhooks',
      payload: { name: 'x', url: 'ftp://example.com/', format: 'telegram', event_types: ['lead.nope'] },
    });
    const fields = expectProblem(bad, 400, 'validation_failed').errors!.map((e) => e.field);
    assert.ok(
      fields.includes('event_types/0') || fields.some((f) => f.startsWith('event_types')),
      JSON.stringify(fields),
    );

    const refused = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: '/api/webhooks',
      payload: { name: 'x', url: 'http://10.1.2.3/hook', event_types: ['lead.ftd'] },
    });
    assert.match(
      expectProblem(refused, 400, 'validation_failed').errors!.find((e) => e.field === 'url')!.message,
      /10\.1\.2\.3.*not call/,
    );
    const masked = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/webhooks/${made.id}`,
      payload: { url: made.url },
    });
    assert.match(expectProblem(masked, 400, 'validation_failed').errors![0].message, /masked/);
    const noChat = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/webhooks/${made.id}`,
      payload: { format: 'telegram' },
    });
    assert.equal(expectProblem(noChat, 400, 'validation_failed').errors![0].field, 'telegram_chat_id');

    const rotated = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/webhooks/${made.id}/rotate-secret`,
    });
    assert.equal(rotated.statusCode, 200, rotated.body);
    assert.notEqual(rotated.json().secret, made.secret);
  });

  test('a lead posted and delivered reaches the webhook as two signed events, in order, once each', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    const hook = await createWebhook(ta, { url: receiver.url, event_types: ['lead.received', 'lead.delivered'] });
    const w = await makeWorld(t, ta, [{}]);
    const res = await postLead(ta, w.token, sampleLead({ sub_id1: 'click-1' }));
    assert.equal(res.json().status, 'delivered', res.body);
    const leadId = res.json().id;

    assert.equal(await ta.app.events.drain(), 2);
    assert.equal(receiver.received.length, 2);
    const [first, second] = receiver.received;
    for (const r of receiver.received) {
      assert.ok(verifySignature(hook.secret, r.headers, r.body), 'signature verifies');
      assert.ok(
        !verifySignature(`whsec_${randomBytes(32).toString('base64')}`, r.headers, r.body),
        'another secret does not',
      );
      assert.ok(!verifySignature(hook.secret, r.headers, r.body.replace('lead.', 'lead_')), 'nor another body');
      assert.ok(!r.body.includes('@example.com') && !r.body.includes('+49151'), 'no contacts in an event');
    }
    assert.equal(first.json.type, 'lead.received');
    assert.equal(second.json.type, 'lead.delivered');
    assert.equal(second.json.data.lead_id, leadId);
    assert.equal(second.json.data.partner_id, w.partners[0].id);
    assert.equal(second.json.data.sub_id1, 'click-1');
    assert.equal(second.json.data.status, 'delivered');
    assert.notEqual(first.headers['webhook-id'], second.headers['webhook-id']);
    // Nothing is sent twice.
    assert.equal(await ta.app.events.drain(), 0);
    const log = await getJson(ta, `/api/webhooks/${hook.id}/deliveries`);
    assert.deepEqual(
      log.data.map((d: any) => [d.event_type, d.state, d.attempts, d.last_status]),
      [
        ['lead.delivered', 'delivered', 1, 200],
        ['lead.received', 'delivered', 1, 200],
      ],
    );
  });

  test("a partner's text quoting the lead's contacts reaches a webhook masked, and so does the log's payload", async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    const hook = await createWebhook(ta, { url: receiver.url, event_types: ['lead.sale_status_changed'] });
    const w = await makeWorld(t, ta, [{}]);
    const lead = sampleLead({ email: 'grace.hopper@example.com' });
    const leadId = (await postLead(ta, w.token, lead)).json().id;
    const pb = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${w.partners[0].postbackToken}?lead_id=${leadId}&sale_status=${encodeURIComponent('call back grace.hopper@example.com')}`,
    });
    assert.equal(pb.statusCode, 200, pb.body);
    await ta.app.events.drain();
    assert.equal(receiver.received.length, 1);
    const body = receiver.received[0].body;
    assert.ok(!body.includes('grace.hopper@example.com'), body);
    assert.match(receiver.received[0].json.data.sale_status, /^call back g\*+@example\.com$/);
    const [d] = (await getJson(ta, `/api/webhooks/${hook.id}/deliveries`)).data;
    assert.ok(!(await getJson(ta, `/api/webhooks/${hook.id}/deliveries/${d.id}`)).payload.includes('grace.hopper'));
  });

  test("someone else's text reaches Slack escaped (no channel ping, no disguised link) and Telegram as plain text", async (t) => {
    const ta = await buildTestApp(t, engine);
    const slack = await startReceiver(t);
    const telegram = await startReceiver(t);
    await createWebhook(ta, { url: slack.url, format: 'slack', event_types: ['lead.sale_status_changed'] });
    await createWebhook(ta, {
      url: telegram.url,
      format: 'telegram',
      telegram_chat_id: '-100200',
      event_types: ['lead.sale_status_changed'],
    });
    const w = await makeWorld(t, ta, [{}], { campaign: { name: 'Spring & <Summer>' } });
    const leadId = (await postLead(ta, w.token, sampleLead())).json().id;
    const status = '<!channel> <https://phish.example/login|Sign in again> & more';
    const pb = await ta.app.inject({
      method: 'GET',
      url: `/api/postback/${w.partners[0].postbackToken}?lead_id=${leadId}&sale_status=${encodeURIComponent(status)}`,
    });
    assert.equal(pb.statusCode, 200, pb.body);
    await ta.app.events.drain();
    const text = slack.received[0].json.text as string;
    assert.ok(!/[<>]/.test(text), text);
    assert.ok(text.includes('&lt;!channel&gt; &lt;https://phish.example/login|Sign in again&gt; &amp; more'), text);
    assert.ok(text.includes('campaign Spring &amp; &lt;Summer&gt;'), 'names too');
    // Telegram without parse_mode shows text as it is: nothing to escape, and nothing escaped twice.
    const tg = telegram.received[0].json;
    assert.equal(tg.parse_mode, undefined);
    assert.ok((tg.text as string).includes(status), tg.text);
  });

  test('a lead no partner took and a duplicate stored as such are both told as lead.rejected, with their status', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    await createWebhook(ta, { url: receiver.url, event_types: ['lead.rejected', 'lead.failed'] });
    const w = await makeWorld(t, ta, [{ url: await downUrl() }]);
    const lead = sampleLead();
    const first = (await postLead(ta, w.token, lead)).json();
    const dup = (await postLead(ta, w.token, lead)).json();
    assert.equal(dup.status, 'duplicate');
    await ta.app.events.drain();
    const got = receiver.received.map((r) => [r.json.type, r.json.data.lead_id, r.json.data.status]);
    assert.equal(first.status, 'rejected');
    assert.deepEqual(
      got.sort(),
      [
        ['lead.rejected', first.id, 'rejected'],
        ['lead.rejected', dup.id, 'duplicate'],
      ].sort(),
    );
  });

  test('no subscription, no event: intake writes nothing to the outbox', async (t) => {
    const ta = await buildTestApp(t, engine);
    const w = await makeWorld(t, ta, [{}]);
    assert.equal((await postLead(ta, w.token, sampleLead())).statusCode, 201);
    const n = await ta.db
      .selectFrom('events')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 0);
  });

  test('a failing receiver is retried with backoff and the same webhook-id; a later event of the same lead waits its turn', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    receiver.answer(503);
    const hook = await createWebhook(ta, { url: receiver.url, event_types: ['lead.received', 'lead.delivered'] });
    const w = await makeWorld(t, ta, [{}]);
    await postLead(ta, w.token, sampleLead());
    const before = Date.now();
    assert.equal(await ta.app.events.drain(), 1, 'only the first event of the lead is tried');
    assert.equal(receiver.received[0].json.type, 'lead.received');
    const [pending] = (await getJson(ta, `/api/webhooks/${hook.id}/deliveries?state=pending`)).data.filter(
      (d: any) => d.attempts === 1,
    );
    assert.equal(pending.last_status, 503);
    const wait = Date.parse(pending.next_attempt_at) - before;
    assert.ok(wait >= 4_000 && wait <= 6_500, `first retry after about 5 s (${wait} ms)`);
    assert.equal(await ta.app.events.drain(), 0, 'not due yet');

    receiver.answer(200);
    await dueNow(ta);
    await ta.app.events.drain();
    assert.deepEqual(
      receiver.received.map((r) => r.json.type),
      ['lead.received', 'lead.received', 'lead.delivered'],
    );
    assert.equal(receiver.received[0].headers['webhook-id'], receiver.received[1].headers['webhook-id']);
    const detail = await getJson(ta, `/api/webhooks/${hook.id}/deliveries/${pending.id}`);
    assert.deepEqual(
      detail.tries.map((x: any) => [x.http_status, x.ok]),
      [
        [503, false],
        [200, true],
      ],
    );
    assert.equal(detail.state, 'delivered');
    assert.equal(JSON.parse(detail.payload).type, 'lead.received');
    assert.equal((await getJson(ta, `/api/webhooks/${hook.id}`)).failing_since, null, 'a success clears failing_since');
  });

  test('a delivery past its 24 hours fails; a manual retry sends it again', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    receiver.answer(500);
    const hook = await createWebhook(ta, { url: receiver.url, event_types: ['lead.received'] });
    const w = await makeWorld(t, ta, [{}]);
    await postLead(ta, w.token, sampleLead());
    await ta.app.events.fanOut();
    await ta.db
      .updateTable('event_deliveries')
      .set({ expires_at: new Date(Date.now() + 1000).toISOString() })
      .execute();
    await ta.app.events.drain();
    const [failed] = (await getJson(ta, `/api/webhooks/${hook.id}/deliveries`)).data;
    assert.equal(failed.state, 'failed');
    assert.equal(failed.next_attempt_at, null);

    receiver.answer(204);
    const retried = await call(ta.app, ta.ownerToken, {
      method: 'POST',
      url: `/api/webhooks/${hook.id}/deliveries/${failed.id}/retry`,
    });
    assert.equal(retried.statusCode, 200, retried.body);
    assert.equal(retried.json().state, 'pending');
    await ta.app.events.drain();
    assert.equal((await getJson(ta, `/api/webhooks/${hook.id}/deliveries/${failed.id}`)).state, 'delivered');
    const audit = await getJson(ta, '/api/audit-log?action=webhook.delivery_retried');
    assert.equal(audit.data.length, 1);
  });

  test('after days of failing the webhook is disabled, its deliveries cancelled, and a notification says so', async (t) => {
    const ta = await buildTestApp(t, engine);
    const receiver = await startReceiver(t);
    receiver.answer(500);
    const hook = await createWebhook(ta, { name: 'Flaky CRM', url: receiver.url, event_types: ['lead.received'] });
    const w = await makeWorld(t, ta, [{}]);
    await postLead(ta, w.token, sampleLead());
    await postLead(ta, w.token, sampleLead());
    await ta.db
      .updateTable('webhooks')
      .set({ failing_since: new Date(Date.now() - 6 * 86400_000).toISOString() })
      .execute();
    await ta.app.events.drain();
    const after = await getJson(ta, `/api/webhooks/${hook.id}`);
    assert.equal(after.status, 'disabled');
    assert.match(after.disabled_reason, /5 days/);
    const states = (await getJson(ta, `/api/webhooks/${hook.id}/deliveries`)).data.map((d: any) => d.state).sort();
    assert.deepEqual(states, ['cancelled', 'pending'].includes(states[0]) ? states.filter(() => true) : states);
    assert.ok(
      states.every((s: string) => s === 'cancelled'),
      `all cancelled: ${states}`,
    );
    const notes = await getJson(ta, '/api/notifications');
    assert.equal(notes.unread_count, 1);
    assert.equal(notes.data[0].type, 'webhook.disabled');
    assert.match(notes.data[0].text, /Flaky CRM/);
    // Enabling again clears the failure.
    const on = await call(ta.app, ta.ownerToken, {
      method: 'PATCH',
      url: `/api/webhooks/${hook.id}`,
      payload: { status: 'active' },
    });
    assert.equal(on.json().failing_since, null);
    assert.equal(on.json().disabled_reason, null);
  });

  test('the outbound guard applies: a webhook to a refused address is never called', async (t) => {
    const ta = await buildTestApp(t, engine, { env: { PARTNER_ALLOWED_NETWORKS: '' } });
    const receiver = await startReceiver(t);
    // Stored directly: the API refuses this URL at save time (tested above).
    const now = new Date().toISOString();
    await ta.db
      .insertInto('webhooks')
      .values({
        id: 'w1',
        name: 'x',
        url: receiver.url,
        format: 'json',
        telegram_chat_id: null,
        event_types: '["lead.received"]',
        secret: 'whsec_AAAA',
        status: 'active',
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
        owner_id: ta.ownerId,
      })
      .execute();
    await ta.db
      .insertInto('event_subscriptions')
      .values({
        event_type: 'lead.received',
        destination_kind: 'webhook',
        destination_id: 'w1',
        traffic_provider_id: null,
        campaign_id: null,
      })
      .execute();
    await ta.db
      .insertInto('events')
      .values({
        type: 'lead.received',
        occurred_at: now,
        lead_id: null,
        partner_id: null,
        traffic_provider_id: null,
        campaign_id: null,
        data: '{}',
        dedupe_key: null,
      })
      .execute();
    await ta.app.events.drain();
    assert.equal(receiver.received.length, 0);
    const [d] = (await getJson(ta, '/api/webhooks/w1/deliveries')).data;
    assert.match(d.last_error, /127\.0\.0\.1 is loopback: not allowed/);
  });
});
