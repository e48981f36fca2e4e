// A partner's "Lead quality" section in a real browser: refused flags picked by their words and a
// minimum score, saved through the API; then a flagged lead goes to the flow's other partner, and
// the lead drawer names the refusing one with the verdict "Lead quality" in the flags' words.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
} from './harness.js';

test(
  'an operator makes a partner refuse flagged leads; a flagged lead goes elsewhere and its drawer says why',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const pickyApi = await startPartner(t, accepting());
    const backupApi = await startPartner(t, accepting());
    const picky = await api.create('/api/partners', {
      name: 'Picky Broker',
      integration: defaultIntegration(pickyApi.url),
    });
    const backup = await api.create('/api/partners', {
      name: 'Backup Buyer',
      integration: defaultIntegration(backupApi.url),
    });
    const flow = await api.create('/api/flows', {
      name: 'Quality flow',
      targets: [
        { partner_id: picky.id, priority: 1 },
        { partner_id: backup.id, priority: 2 },
      ],
    });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate Q' });
    const campaign = await api.create('/api/campaigns', {
      name: 'Quality campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-email').waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/partners/${picky.id}`);
    const section = page.getByTestId('partner-quality');
    await section.waitFor();
    // Mantine lays its pill box over the input, hence force.
    await section.getByRole('textbox', { name: 'Refuse leads flagged' }).click({ force: true });
    await page.getByRole('option', { name: 'Phone from another country', exact: true }).click();
    await page.keyboard.press('Escape');
    await section.getByLabel('Minimum quality score').fill('60');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('partner-saved').waitFor();
    assert.deepEqual((await api.send('GET', `/api/partners/${picky.id}`)).json().quality, {
      refuse_flags: ['phone_country'],
      min_score: 60,
    });
    await screenshot(page, 'partner-quality');

    // A DE lead with a French phone (phone_country, score 70): over the minimum, but flagged.
    const res = await api.send(
      'POST',
      '/api/intake/leads',
      {
        first_name: 'Marie',
        last_name: 'Tester',
        email: 'marie@example.com',
        phone: '+33612345678',
        country: 'DE',
        ip: '203.0.113.7',
        campaign_id: campaign.id,
      },
      provider.token,
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json().status, 'delivered');
    assert.deepEqual([pickyApi.received.length, backupApi.received.length], [0, 1]);

    await page.getByRole('link', { name: 'Leads' }).click();
    await page.waitForURL('**/leads');
    await page.getByTestId('lead-row').first().click();
    const drawer = page.getByTestId('lead-drawer');
    await drawer.getByTestId('lead-status').waitFor();
    const verdict = drawer.getByTestId('verdict');
    assert.equal(await verdict.getAttribute('data-verdict'), 'quality');
    assert.match(
      await verdict.innerText(),
      /Picky Broker\s+Lead quality\s+refuses flagged leads \(Phone from another country\)/i,
    );
    await assertAccessible(page, 'lead drawer with a quality verdict');
  },
);
