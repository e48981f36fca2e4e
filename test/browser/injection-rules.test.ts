// Recurring re-injection rules in a real browser: a rule made on the injections screen (its
// preview count shown before saving), listed, accessible, and fitting a 390 px phone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
  wideElements,
} from './harness.js';

const LEADS = 3;

test(
  'an operator makes a rule with its preview count shown, on a desktop and on a phone',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const refuser = await startPartner(t, rejecting(200, 'no capacity today'));
    const no = await api.create('/api/partners', { name: 'Refuser Inc', integration: defaultIntegration(refuser.url) });
    const flow = await api.create('/api/flows', {
      name: 'Second chance',
      targets: [{ partner_id: no.id, priority: 1 }],
    });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
    const campaign = await api.create('/api/campaigns', {
      name: 'Spring DE',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });
    await api.create('/api/campaigns', {
      name: 'Other campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });
    for (let i = 0; i < LEADS; i++) {
      const res = await api.send(
        'POST',
        '/api/intake/leads',
        {
          first_name: 'Ada',
          last_name: `Rule${i}`,
          email: `rule${i}@example.com`,
          phone: `+4915112${String(345680 + i)}`,
          country: 'DE',
          ip: '203.0.113.7',
          campaign_id: campaign.id,
        },
        provider.token,
      );
      assert.equal(res.json().status, 'rejected', res.text);
    }

    const { page } = await openBrowser(t, { timezoneId: 'Europe/Berlin' });
    await signIn(page, server);
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/leads/injections`);
    await page.getByTestId('rules-empty').waitFor();
    await page.getByRole('button', { name: 'New rule' }).click();
    const dialog = page.getByRole('dialog', { name: 'New re-injection rule' });
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Refused this week');
    const count = () => dialog.getByTestId('rule-preview-count').innerText();
    // Every rejected lead of the last 7 days, before a campaign is chosen…
    await waitUntil('the preview count', async () => /^3 leads would be taken/.test(await count()));
    await dialog.getByRole('textbox', { name: 'Campaign' }).click();
    await page.getByRole('option', { name: 'Other campaign' }).click();
    await waitUntil('the count for another campaign', async () => /^0 leads would be taken/.test(await count()));
    await dialog.getByRole('textbox', { name: 'Campaign' }).click();
    await page.getByRole('option', { name: 'Spring DE' }).click();
    await waitUntil('the count for the campaign', async () => /^3 leads would be taken/.test(await count()));
    await dialog.getByRole('textbox', { name: 'Send through flow' }).click();
    await page.getByRole('option', { name: 'Second chance' }).click();
    await dialog.getByRole('textbox', { name: 'Time zone' }).fill('Europe/Berl');
    await page.getByRole('option', { name: 'Europe/Berlin' }).click();
    await dialog.getByRole('textbox', { name: 'At (HH:MM)' }).fill('10:00');
    await dialog.getByText('Sat', { exact: true }).click();
    await dialog.getByText('Sun', { exact: true }).click();
    await assertAccessible(page, 'rule-dialog');
    await screenshot(page, 'rule-dialog');

    // The same dialog on a phone: nothing wider than the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const dialogWide = await wideElements(page);
    assert.ok(dialogWide.scrollWidth <= 390 && !dialogWide.lines.length, dialogWide.lines.join('\n'));
    await page.setViewportSize({ width: 1280, height: 800 });

    await dialog.getByRole('button', { name: 'Save rule' }).click();
    const row = page.getByTestId('rule-row');
    await row.waitFor();
    assert.match(await row.innerText(), /Refused this week/);
    assert.match(await row.innerText(), /10:00 Europe\/Berlin, on mon, tue, wed, thu, fri/);
    assert.match(await row.getByTestId('rule-last-run').innerText(), /Never/);
    const [rule] = (await api.send('GET', '/api/injection-rules')).json().data;
    assert.deepEqual(
      [
        rule.flow_id,
        rule.filter.campaign_id,
        rule.filter.status,
        rule.filter.last_days,
        rule.schedule.days,
        rule.enabled,
      ],
      [flow.id, campaign.id, ['rejected'], 7, ['mon', 'tue', 'wed', 'thu', 'fri'], true],
    );

    // Disabled from its switch; the list on a phone fits too.
    await page.getByRole('switch', { name: 'Refused this week enabled' }).dispatchEvent('click');
    await waitUntil(
      'the rule disabled',
      async () => (await api.send('GET', `/api/injection-rules/${rule.id}`)).json().enabled === false,
    );
    await assertAccessible(page, 'injections-rules');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId('rule-row').waitFor();
    await page.waitForLoadState('networkidle');
    const listWide = await wideElements(page);
    assert.ok(listWide.scrollWidth <= 390 && !listWide.lines.length, listWide.lines.join('\n'));
    await screenshot(page, 'phone-injections-rules');
  },
);
