// Leads in a real browser: leads made through the API (delivered by one loopback partner,
// rejected by another), then filtered in the table, the filter surviving a reload through the
// URL, and one lead opened in the drawer with its delivery attempts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { accepting, defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import { chromiumAvailable, openBrowser, screenshot, startServerAndClient, signIn, waitUntil } from './harness.js';

test(
  'an operator filters the Leads table, reloads, and opens a lead with its attempts',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);

    // Two campaigns of one provider: one flow to a buyer that takes leads, one to a buyer that refuses.
    const taker = await startPartner(t, accepting());
    const refuser = await startPartner(t, rejecting(200, 'no capacity today'));
    const good = await api.create('/api/partners', { name: 'Taker Ltd', integration: defaultIntegration(taker.url) });
    const bad = await api.create('/api/partners', {
      name: 'Refuser Inc',
      integration: defaultIntegration(refuser.url),
    });
    const goodFlow = await api.create('/api/flows', {
      name: 'Good flow',
      targets: [{ partner_id: good.id, priority: 1 }],
    });
    const badFlow = await api.create('/api/flows', {
      name: 'Bad flow',
      targets: [{ partner_id: bad.id, priority: 1 }],
    });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
    const payout = { model: 'cpl', amount: 10 };
    const goodCampaign = await api.create('/api/campaigns', {
      name: 'Good campaign',
      traffic_provider_id: provider.id,
      flow_id: goodFlow.id,
      payout,
    });
    const badCampaign = await api.create('/api/campaigns', {
      name: 'Bad campaign',
      traffic_provider_id: provider.id,
      flow_id: badFlow.id,
      payout,
    });

    const statuses = new Map<string, string>();
    const leads = [
      { first_name: 'Grace', campaign_id: goodCampaign.id },
      { first_name: 'Alan', campaign_id: goodCampaign.id },
      { first_name: 'Edsger', campaign_id: badCampaign.id },
    ];
    for (const [i, l] of leads.entries()) {
      const res = await api.send(
        'POST',
        '/api/intake/leads',
        {
          ...l,
          last_name: 'Tester',
          email: `lead${i}@example.com`,
          phone: `+4915112${String(345670 + i)}`,
          country: 'DE',
          ip: '203.0.113.7',
        },
        provider.token,
      );
      assert.equal(res.status, 201, res.text);
      statuses.set(res.json().id, res.json().status);
    }
    assert.deepEqual(
      [...statuses.values()].sort(),
      ['delivered', 'delivered', 'rejected'],
      'the partners decided as set up',
    );
    const rejectedId = [...statuses].find(([, s]) => s === 'rejected')![0];

    const { page } = await openBrowser(t);
    await signIn(page, server);

    await page.getByRole('link', { name: 'Leads' }).click();
    await page.waitForURL('**/leads');
    const rows = page.getByTestId('lead-row');
    // The table re-renders when its query answers: wait for the row count, not for a first row.
    const rowCount = (n: number) => waitUntil(`${n} lead rows`, async () => (await rows.count()) === n);
    await rows.nth(2).waitFor();
    assert.equal(await rows.count(), 3, 'unfiltered, every lead is listed');

    // Filter by status: pick "rejected" in the Status multi-select and apply (Mantine lays its
    // pill box over the input, hence force).
    await page.getByRole('textbox', { name: 'Status', exact: true }).click({ force: true });
    await page.getByRole('option', { name: 'rejected', exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]status=rejected/);
    await rowCount(1);
    assert.deepEqual(await page.getByTestId('lead-row-status').allTextContents(), ['rejected']);
    await screenshot(page, 'leads');

    // Export CSV downloads the same filtered rows (fetched with the session's token).
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Export CSV' }).click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8');
    assert.equal(csv.trim().split('\n').length, 2, `header and the one rejected lead:\n${csv}`);
    assert.ok(csv.includes(rejectedId));

    // The column chooser hides a column, and the choice outlives the reload below.
    await page.getByRole('button', { name: 'Columns' }).click();
    await page.getByTestId('column-chooser').getByText('Email', { exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByRole('columnheader', { name: 'Email' }).waitFor({ state: 'detached' });

    // The filter lives in the URL: a reload shows the same rows.
    await page.reload();
    await rows.first().waitFor();
    assert.equal(await rows.count(), 1, 'still filtered after a reload');
    assert.equal(await rows.first().getAttribute('data-lead-id'), rejectedId);
    assert.equal(await page.getByRole('columnheader', { name: 'Email' }).count(), 0, 'the hidden column stays hidden');
    assert.equal(await page.getByRole('columnheader', { name: 'Country' }).count(), 1);

    // The drawer shows the lead and its attempt at the refusing partner.
    await rows.first().click();
    const drawer = page.getByTestId('lead-drawer');
    await drawer.waitFor();
    assert.equal(await drawer.getByTestId('lead-status').textContent(), 'rejected');
    const attempts = drawer.getByTestId('attempt');
    assert.equal(await attempts.count(), 1);
    assert.match(await attempts.first().innerText(), /Refuser Inc/);
    assert.equal(await attempts.first().getByTestId('attempt-outcome').textContent(), 'rejected');
    assert.match(await attempts.first().innerText(), /HTTP 200/);
    assert.match(await drawer.innerText(), /no capacity today/);
    // the drawer's slide-in
    await waitUntil(
      'animations to finish',
      () => page.evaluate("document.getAnimations().every((a) => a.playState === 'finished')") as Promise<boolean>,
    );
    await screenshot(page, 'lead-drawer');

    // A delivered lead's drawer offers its autologin URL to copy.
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Reset' }).click();
    await page.waitForURL((u) => u.search === '');
    await rowCount(3);
    await rows.filter({ hasText: 'Grace' }).click();
    await drawer.getByTestId('lead-autologin').waitFor();
    assert.match(await drawer.getByTestId('lead-autologin').innerText(), /^https:\/\/broker\.example\/login\/P-/);
    assert.equal(await drawer.getByRole('button', { name: 'Copy' }).count(), 1);
  },
);
