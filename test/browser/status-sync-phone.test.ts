// Issue 26, item 1 on a phone (390×844): a partner's status sync cannot change a lead before its
// dry run was shown. The schedule and "apply" stay closed until the dry run; the dry run changes
// nothing; only then can the sync be put on schedule. Real loopback servers for the partner and its
// status API. (The desktop run of the same rule is in conversion-loop.test.ts.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sampleLead } from '../distribution-world.js';
import { accepting, defaultIntegration, json, startPartner } from '../partner-server.js';
import { request } from '../processes.js';
import { chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient, waitUntil } from './harness.js';

test('on a phone, a status sync cannot change a lead before its dry run was shown', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);
  const deposited = new Set<string>();
  const statusApi = await startPartner(t, (_req, res) =>
    json(res, 200, { items: [...deposited].map((id) => ({ id, state: 'Depositor' })) }),
  );
  const partner = await client.create('/api/partners', {
    name: 'Phone Broker',
    integration: defaultIntegration((await startPartner(t, accepting())).url),
  });
  const flow = await client.create('/api/flows', { name: 'Main', targets: [{ partner_id: partner.id, priority: 1 }] });
  const provider = await client.create('/api/traffic-providers', { name: 'Affiliate P' });
  await client.create('/api/campaigns', {
    name: 'C',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpa', amount: 40 },
  });
  const posted = await request(server.port, 'POST', '/api/intake/leads', sampleLead(), {
    authorization: `Bearer ${provider.token}`,
  });
  const leadId = posted.json().id;
  deposited.add((await client.send('GET', `/api/leads/${leadId}`)).json().partner_lead_id);
  const ftdAt = async () => (await client.send('GET', `/api/leads/${leadId}`)).json().ftd_at;

  const { page } = await openBrowser(t);
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, server);
  await page.waitForURL((url) => url.pathname === '/'); // signed in
  // The saved settings are read slowly: until they are in, nothing can be edited or saved (a save
  // would have replaced them with the empty form).
  await page.route('**/api/partners/*/status-pull', async (route) => {
    if (route.request().method() === 'GET') await new Promise((r) => setTimeout(r, 1500));
    await route.continue();
  });
  await page.goto(`http://127.0.0.1:${server.port}/partners/${partner.id}`);
  await page.getByTestId('status-sync').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Save status sync' }).count(), 0, 'no save before the load');
  await page.getByLabel('Statuses URL').fill(`${statusApi.url}?from={{from}}`);
  await page.getByLabel('List path').fill('items');
  await page.getByLabel('Status path').fill('state');
  await page.getByLabel('Status words').fill('Depositor = Deposited [FTD]');

  const schedule = page.getByRole('switch', { name: 'Run on schedule' });
  const apply = page.getByRole('button', { name: 'Pull now and apply' });
  assert.equal(await schedule.isDisabled(), true, 'Run on schedule waits for a dry run');
  await page.getByRole('button', { name: 'Save status sync' }).click();
  await page.getByTestId('sync-saved').waitFor();
  assert.equal(await schedule.isDisabled(), true, 'still closed once saved');
  assert.equal(await apply.isDisabled(), true, 'no live pull before the dry run');
  // Even asked directly, the API keeps the schedule off until a dry run was seen.
  const enable = await client.send('PUT', `/api/partners/${partner.id}/status-pull`, {
    ...(await client.send('GET', `/api/partners/${partner.id}/status-pull`)).json().config,
    enabled: true,
  });
  assert.equal(enable.status, 400, enable.text);
  assert.equal(await ftdAt(), null, 'saving changed nothing');

  await page.getByTestId('pull-dry-run').click();
  await page.getByText('The dry run would change 1 lead(s), 1 of them FTDs.').waitFor();
  assert.equal(await ftdAt(), null, 'the dry run changed nothing');
  assert.equal(await schedule.isDisabled(), false, 'the preview opens the schedule');
  const overflow = Number(await page.evaluate('document.documentElement.scrollWidth'));
  assert.ok(overflow <= 390, `the status sync fits the phone (${overflow} px wide)`);
  await screenshot(page, 'status-sync-phone');
  await apply.click();
  await waitUntil('the FTD to be applied', async () => (await ftdAt()) !== null);
});
