// The campaign screen shows the id a traffic provider must send (issue 13), and that id is the
// one the intake accepts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
} from './harness.js';

test(
  'the campaign screen shows the campaign id a provider sends, and the intake takes it',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
    const campaign = await api.create('/api/campaigns', {
      name: 'Spring DE',
      traffic_provider_id: provider.id,
      flow_id: null,
      payout: { model: 'cpl', amount: 10 },
    });
    // A second active campaign: the provider can no longer leave campaign_id out.
    await api.create('/api/campaigns', {
      name: 'Spring AT',
      traffic_provider_id: provider.id,
      flow_id: null,
      payout: { model: 'cpl', amount: 10 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Campaigns' }).waitFor(); // signed in
    await page.goto(`http://127.0.0.1:${server.port}/campaigns/${campaign.id}`);
    const shown = page.getByTestId('campaign-id');
    await shown.waitFor();
    assert.equal(await shown.innerText(), campaign.id);
    assert.match(
      await page.getByText(/sends it as campaign_id/).innerText(),
      /Affiliate One sends it as campaign_id in each lead/,
    );
    assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 1);
    await assertAccessible(page, 'Campaign');
    for (const [w, h, name] of [
      [390, 844, 'phone'],
      [1024, 700, 'laptop'],
      [1440, 900, 'desktop'],
    ] as const) {
      await page.setViewportSize({ width: w, height: h });
      await screenshot(page, `campaign-id-${name}`);
    }

    // The id as shown is what the intake wants.
    const lead = {
      first_name: 'Ida',
      last_name: 'Id',
      email: 'ida@example.com',
      phone: '+4915112345678',
      country: 'DE',
      ip: '203.0.113.9',
    };
    const without = await api.send('POST', '/api/intake/leads', lead, provider.token);
    assert.equal(without.status, 400, without.text);
    const res = await api.send(
      'POST',
      '/api/intake/leads',
      { ...lead, campaign_id: await shown.innerText() },
      provider.token,
    );
    assert.equal(res.status, 201, res.text);
  },
);
