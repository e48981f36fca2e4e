// The review queue in a real browser: a provider whose rule holds leads with a foreign phone
// gets two such leads answered pending; Quality → Review queue lists both, oldest first, with
// their flags; one is approved (it leaves the queue and is routed), the other rejected with a
// reason its provider is then told; the alert's minutes are saved from the same screen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultIntegration } from '../partner-server.js';
import { sampleLead } from '../distribution-world.js';
import { request } from '../processes.js';
import { chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient, waitUntil } from './harness.js';

test('held leads are approved and rejected from the review queue', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);
  // Nothing listens on port 9: an approved lead is routed and its delivery fails, which is all we need.
  const partner = await client.create('/api/partners', {
    name: 'Alpha Partner',
    integration: defaultIntegration('http://127.0.0.1:9/leads'),
  });
  const flow = await client.create('/api/flows', { name: 'Main', targets: [{ partner_id: partner.id, priority: 1 }] });
  const provider = await client.create('/api/traffic-providers', {
    name: 'Careful Clicks',
    review: { hold_flags: ['phone_country'] },
  });
  await client.create('/api/campaigns', {
    name: 'C',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });
  const ids: string[] = [];
  for (const phone of ['+33612345601', '+33612345602']) {
    const res = await request(server.port, 'POST', '/api/intake/leads', sampleLead({ phone }), {
      authorization: `Bearer ${provider.token}`,
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json().status, 'pending');
    ids.push(res.json().id);
  }
  const status = async (id: string) => (await client.send('GET', `/api/leads/${id}`)).json();

  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.waitForURL((url) => url.pathname === '/');
  await page.getByRole('link', { name: 'Review queue', exact: true }).click();
  await page.getByTestId('review-table').waitFor();
  assert.match(await page.getByTestId('review-summary').innerText(), /2 leads held/);
  const rows = page.getByTestId('review-table').locator('tbody tr');
  assert.equal(await rows.count(), 2);
  assert.match(await rows.first().innerText(), /phone from another country/i);
  await screenshot(page, 'review-queue');

  // Approve the first: it leaves the queue and is routed (its delivery fails: nothing listens).
  await page.getByRole('checkbox', { name: `Select lead ${ids[0]}` }).check();
  await page.getByRole('button', { name: /^Approve/ }).click();
  await page.getByTestId('review-outcome').waitFor();
  assert.equal(await page.getByTestId('review-outcome').innerText(), 'Approved 1 lead.');
  await waitUntil('the approved lead to leave the queue', async () => (await rows.count()) === 1);
  assert.notEqual((await status(ids[0])).status, 'held');

  // Reject the second with a reason its provider is told.
  await page.getByRole('checkbox', { name: `Select lead ${ids[1]}` }).check();
  await page.getByRole('button', { name: /^Reject/ }).click();
  await page.getByLabel('Reason').fill('fake phone number');
  await page.getByRole('dialog').getByRole('button', { name: 'Reject', exact: true }).click();
  await page.getByTestId('review-empty').waitFor();
  const rejected = await status(ids[1]);
  assert.deepEqual([rejected.status, rejected.reason], ['rejected', 'rejected in review: fake phone number']);

  // The alert's minutes, saved beside the queue.
  await page.getByLabel('Minutes a lead may wait before the alert').fill('30');
  await page.getByTestId('review-alert').getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('review-alert').getByText('Saved.').waitFor();
  assert.equal((await client.send('GET', '/api/quality/settings')).json().review_alert_minutes, 30);
});
