// Issue 15 in a real browser, on the running server: Settings → Webhooks (the secret once, the
// delivery log, a retry), the bell with a partner's full cap, a partner's status sync (Pull now
// as a dry run, then applied), a provider's postbacks (test send, the FTD postback in its log),
// and the lead drawer's status history. Real loopback servers for the partner, its status API,
// the tracker and the webhook receiver.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sampleLead } from '../distribution-world.js';
import { accepting, defaultIntegration, json, startPartner } from '../partner-server.js';
import { request } from '../processes.js';
import { startReceiver, verifySignature } from '../webhook-receiver.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

test(
  'webhooks: made in Settings with its secret shown once; events arrive signed and show in the delivery log; a failed one is retried',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const receiver = await startReceiver(t);
    receiver.answer(500);
    const partner = await client.create('/api/partners', {
      name: 'Broker One',
      integration: defaultIntegration((await startPartner(t, accepting())).url),
    });
    const flow = await client.create('/api/flows', {
      name: 'Main',
      targets: [{ partner_id: partner.id, priority: 1 }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Affiliate' });
    await client.create('/api/campaigns', {
      name: 'Campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
    await page.getByTestId('webhooks-empty').waitFor();
    await page.getByRole('button', { name: 'New webhook' }).click();
    await page.getByLabel('Name').fill('CRM');
    await page.getByLabel('URL').fill('http://10.0.0.1/hook');
    await page.getByLabel('Lead received').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('webhook-errors').waitFor();
    assert.match(
      (await page.getByLabel('URL').getAttribute('aria-invalid')) ?? '',
      /true/,
      'the refused URL is marked at its field',
    );

    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save' }).click();
    const secret = (await page.getByTestId('webhook-secret').innerText()).trim();
    assert.match(secret, /^whsec_/);
    await screenshot(page, 'webhook-secret');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.waitForURL(/\/settings\/webhooks\/[0-9a-f-]{36}$/);
    assert.equal(await page.getByTestId('webhook-secret').count(), 0);

    // "Send test event": one signed event now, the receiver's answer shown (it answers 500 for now).
    await page.getByRole('button', { name: 'Send test event' }).click();
    const tested = page.getByTestId('webhook-test-result');
    await tested.waitFor();
    assert.match(await tested.innerText(), /^Test event not accepted: HTTP 500 in \d+ ms\.$/);
    assert.equal(receiver.received.length, 1);
    const test = receiver.received[0];
    assert.match(String(test.headers['webhook-id']), /^evt_test_/);
    assert.equal(JSON.parse(test.body).type, 'webhook.test');
    assert.ok(verifySignature(secret, test.headers, test.body), 'the test event is signed with the secret shown');
    receiver.received.length = 0;

    const res = await request(server.port, 'POST', '/api/intake/leads', sampleLead(), {
      authorization: `Bearer ${provider.token}`,
    });
    assert.equal(res.status, 201, res.text);
    await waitUntil('the first try to arrive', async () => receiver.received.length >= 1);
    await page.getByTestId('webhook-deliveries-row').first().waitFor({ timeout: 15_000 });
    await waitUntil('the log to show the failed try', async () =>
      (await page.getByTestId('webhook-deliveries').innerText()).includes('HTTP 500'),
    );
    receiver.answer(200);
    await page.getByTestId('delivery-retry').first().click();
    await waitUntil('the retry to arrive', async () => receiver.received.length >= 2, 20_000);
    const last = receiver.received.at(-1)!;
    assert.ok(verifySignature(secret, last.headers, last.body), 'signed with the secret the screen showed');
    await waitUntil(
      'the log to show it delivered',
      async () => (await page.getByTestId('delivery-state').first().textContent()) === 'delivered',
      20_000,
    );
    await assertAccessible(page, 'webhook editor');
  },
);

test("the bell shows a partner's full cap until it is marked read", { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);
  const partner = await client.create('/api/partners', {
    name: 'Capped Broker',
    daily_cap: 1,
    integration: defaultIntegration((await startPartner(t, accepting())).url),
  });
  const flow = await client.create('/api/flows', { name: 'Main', targets: [{ partner_id: partner.id, priority: 1 }] });
  const provider = await client.create('/api/traffic-providers', { name: 'Affiliate' });
  await client.create('/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });
  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByTestId('notifications-bell').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Notifications', exact: true }).count(), 1, 'nothing unread yet');

  assert.equal(
    (
      await request(server.port, 'POST', '/api/intake/leads', sampleLead(), {
        authorization: `Bearer ${provider.token}`,
      })
    ).status,
    201,
  );
  await page.reload();
  await page.getByRole('button', { name: 'Notifications: 1 unread' }).click();
  const note = page.getByTestId('notification').first();
  await note.waitFor();
  assert.match(await note.innerText(), /Capped Broker: daily cap full \(1 of 1\)/);
  await screenshot(page, 'notifications');
  await assertAccessible(page, 'notifications');
  await page.getByTestId('notifications-read').click();
  await page.getByRole('button', { name: 'Notifications', exact: true }).waitFor();
});

test(
  "status sync and postbacks: Pull now shows then applies an FTD, the tracker gets it with the payout, the drawer shows where it came from and takes an operator's own",
  { timeout: 150_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const deposited = new Set<string>();
    const statusApi = await startPartner(t, (_req, res) =>
      json(res, 200, { items: [...deposited].map((id) => ({ id, state: 'Depositor' })) }),
    );
    const tracker = await startReceiver(t);
    const partner = await client.create('/api/partners', {
      name: 'Quiet Broker',
      integration: defaultIntegration((await startPartner(t, accepting())).url),
    });
    const flow = await client.create('/api/flows', {
      name: 'Main',
      targets: [{ partner_id: partner.id, priority: 1 }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Affiliate X' });
    await client.create('/api/campaigns', {
      name: 'CPA campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpa', amount: 40 },
    });
    const posted = await request(server.port, 'POST', '/api/intake/leads', sampleLead({ sub_id1: 'clk-9' }), {
      authorization: `Bearer ${provider.token}`,
    });
    const leadId = posted.json().id;
    const lead = (await client.send('GET', `/api/leads/${leadId}`)).json();
    deposited.add(lead.partner_lead_id);

    const { page } = await openBrowser(t);
    await signIn(page, server);

    // The provider's tracker postback, and a test send. The saved postbacks are read slowly: a row
    // added before they arrive must not be dropped when they do (CI once clicked "Add postback"
    // first and lost the row), so the panel offers nothing to edit until they are in.
    await page.route('**/api/traffic-providers/*/postbacks', async (route) => {
      if (route.request().method() === 'GET') await new Promise((r) => setTimeout(r, 2000));
      await route.continue();
    });
    const saved = page.waitForResponse((r) => r.url().endsWith('/postbacks') && r.request().method() === 'GET');
    await page.getByRole('link', { name: 'Traffic providers', exact: true }).click();
    await page.getByRole('link', { name: 'Affiliate X' }).click();
    const panel = page.getByTestId('provider-postbacks');
    await panel.waitFor();
    await page.getByRole('button', { name: 'Add postback' }).click();
    await page.getByLabel('Postback URL').fill(`${tracker.url}?click={sub_id1}&payout={payout}&partner={partner_name}`);
    await saved;
    assert.match(await page.getByLabel('Postback URL').inputValue(), /partner_name/, 'the new row outlived the load');
    await page.getByRole('button', { name: 'Save postbacks' }).click();
    await page.getByTestId('postbacks-errors').waitFor();
    assert.match(await panel.innerText(), /unknown macro \{partner_name\}/);
    await page.getByLabel('Postback URL').fill(`${tracker.url}?click={sub_id1}&payout={payout}`);
    await page.getByRole('button', { name: 'Save postbacks' }).click();
    await page.getByTestId('postbacks-saved').waitFor();
    await page.getByRole('button', { name: 'Send test postback' }).click();
    await page.getByTestId('postback-test').waitFor();
    assert.match(await page.getByTestId('postback-test').innerText(), /HTTP 200/);
    assert.equal(tracker.received.length, 1, 'the test postback reached the tracker');
    await assertAccessible(page, 'provider postbacks');

    // The partner's status sync: Pull now (dry run) shows the FTD and changes nothing; then applied.
    await page.getByRole('link', { name: 'Partners', exact: true }).click();
    await page.getByRole('link', { name: 'Quiet Broker' }).click();
    const sync = page.getByTestId('status-sync');
    await sync.waitFor();
    await page.getByLabel('Statuses URL').fill(`${statusApi.url}?from={{from}}`);
    await page.getByLabel('List path').fill('items');
    await page.getByLabel('Status path').fill('state');
    await page.getByLabel('Status words').fill('Depositor = Deposited [FTD]');
    // No live change before a preview: saved off, and neither the schedule nor "apply" is open yet.
    const schedule = page.getByRole('switch', { name: 'Run on schedule' });
    const apply = page.getByRole('button', { name: 'Pull now and apply' });
    assert.equal(await schedule.isDisabled(), true, 'Run on schedule waits for a dry run');
    await page.getByRole('button', { name: 'Save status sync' }).click();
    await page.getByTestId('sync-saved').waitFor();
    assert.match(await page.getByTestId('sync-saved').innerText(), /not on schedule: make a dry run/);
    assert.equal(await schedule.isChecked(), false);
    assert.equal(await schedule.isDisabled(), true);
    assert.equal(await apply.isDisabled(), true, 'no live pull before the dry run');
    const stored = (await client.send('GET', `/api/partners/${partner.id}/status-pull`)).json();
    assert.deepEqual([stored.config.enabled, stored.dry_run_seen], [false, false]);
    await page.getByTestId('pull-dry-run').click();
    await page.getByTestId('pull-change').waitFor();
    await page.getByText('The dry run would change 1 lead(s), 1 of them FTDs.').waitFor();
    assert.equal(await schedule.isDisabled(), false, 'the preview opens the schedule');
    assert.match(
      await page.getByTestId('pull-result').innerText(),
      /Dry run: nothing was changed[\s\S]*1 lead\(s\) would change/,
    );
    assert.equal((await client.send('GET', `/api/leads/${leadId}`)).json().ftd_at, null, 'the dry run changed nothing');
    await screenshot(page, 'status-sync-dry-run');
    await apply.click();
    await waitUntil(
      'the FTD to be applied',
      async () => (await client.send('GET', `/api/leads/${leadId}`)).json().ftd_at !== null,
    );
    await page.getByTestId('sync-health').waitFor();
    await assertAccessible(page, 'status sync');

    // The tracker gets the FTD with the payout (dispatched within a second or so).
    await waitUntil('the FTD postback', async () => tracker.received.length >= 2, 20_000);
    const q = new URL(tracker.received[1].url, 'http://x').searchParams;
    assert.deepEqual([q.get('click'), q.get('payout')], ['clk-9', '40.00']);

    // The lead drawer says where the FTD came from.
    await page.getByRole('link', { name: 'Leads', exact: true }).click();
    await page.getByTestId('lead-row').first().click();
    await page.getByTestId('lead-drawer').waitFor();
    await page.getByTestId('history-row').waitFor();
    assert.match((await page.getByTestId('status-history').textContent()) ?? '', /Deposited.*FTD.*status pull/);
    // An operator records what the partner said on the phone: a second row, from the operator.
    await page.getByLabel('Set sale status').fill('Call back Monday');
    await page.getByRole('button', { name: 'Record' }).click();
    await waitUntil('the operator row', async () => (await page.getByTestId('history-row').count()) === 2);
    assert.match(
      (await page.getByTestId('history-row').nth(1).textContent()) ?? '',
      /Deposited → Call back Monday.*operator/,
    );
    await assertAccessible(page, 'lead drawer');
  },
);
