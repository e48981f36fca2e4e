// Traffic providers and campaigns in a real browser: make a provider (its token shown once),
// post a lead with that token, give it a campaign in the browser so leads are accepted, then
// rotate the token and check the old one is refused at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from '../processes.js';
import { defaultIntegration } from '../partner-server.js';
import { sampleLead } from '../distribution-world.js';
import { chromiumAvailable, openBrowser, screenshot, startServerAndClient, signIn } from './harness.js';

const TOKEN = /^lgt_[0-9A-Za-z]{50}$/;

test(
  'an operator sets up a traffic provider and its campaign; rotating the token cuts off the old one',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    // Nothing listens on port 9: the lead is stored and its delivery fails, which is all we need.
    const partner = await client.create('/api/partners', {
      name: 'Alpha Partner',
      integration: defaultIntegration('http://127.0.0.1:9/leads'),
    });
    await client.create('/api/flows', {
      name: 'DE traffic',
      targets: [{ partner_id: partner.id, priority: 1, weight: 100 }],
    });
    const postLead = (token: string) =>
      request(server.port, 'POST', '/api/intake/leads', sampleLead(), { authorization: `Bearer ${token}` });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Traffic providers', exact: true }).click();
    await page.waitForURL('**/traffic-providers');
    await page.getByTestId('providers-empty').waitFor();

    // A bad address comes back from the API to the Allowed IPs field, naming its line.
    await page.getByRole('button', { name: 'New provider' }).click();
    await page.getByLabel('Name').fill('Media Buyers Ltd');
    const ips = page.getByLabel('Allowed IPs');
    await ips.fill('127.0.0.1\nnot-an-address');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('provider-errors').waitFor();
    assert.equal(await ips.getAttribute('aria-invalid'), 'true');
    const describedBy = (await ips.getAttribute('aria-describedby')) ?? '';
    const message = await page
      .locator(`[id="${describedBy.split(' ').find((d) => d.endsWith('-error'))}"]`)
      .innerText();
    assert.match(message, /^Line 2: /);

    // Fixed: saved, and the token is shown once.
    await ips.fill('127.0.0.1\n::1');
    await page.getByRole('button', { name: 'Save' }).click();
    const shown = page.getByTestId('provider-token');
    await shown.waitFor();
    const token = (await shown.innerText()).trim();
    assert.match(token, TOKEN);
    await page.waitForTimeout(400); // the dialog's fade-in, for the screenshot only
    await screenshot(page, 'provider-token');
    await page.getByRole('button', { name: 'Done' }).click();
    await page.getByTestId('provider-saved').waitFor();
    assert.match(page.url(), /\/traffic-providers\/[0-9a-f-]{36}$/);
    assert.equal(await page.getByTestId('provider-token').count(), 0, 'the token is gone once the dialog is closed');

    // No campaign yet: the lead is refused, naming campaign_id.
    const refused = await postLead(token);
    assert.equal(refused.status, 400, refused.text);
    assert.ok(
      refused.json().errors.some((e: { field: string }) => e.field === 'campaign_id'),
      refused.text,
    );

    await page.getByRole('link', { name: 'Campaigns', exact: true }).click();
    await page.waitForURL('**/campaigns');
    await page.getByTestId('campaigns-empty').waitFor();
    await page.getByRole('button', { name: 'New campaign' }).click();
    await page.getByLabel('Name').fill('DE autumn');
    await page.getByRole('textbox', { name: 'Traffic provider' }).click();
    await page.getByRole('option', { name: 'Media Buyers Ltd' }).click();
    await page.getByRole('textbox', { name: 'Flow' }).click();
    await page.getByRole('option', { name: 'DE traffic' }).click();
    const countries = page.getByRole('textbox', { name: 'Countries' });
    await countries.fill('de');
    await countries.press('Enter');
    await page.getByLabel('Payout (USD)').fill('12.5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('campaign-saved').waitFor();

    const campaigns = await client.send('GET', '/api/campaigns');
    const [stored] = campaigns.json().data;
    assert.deepEqual(
      {
        name: stored.name,
        provider: stored.traffic_provider_name,
        flow: stored.flow_name,
        countries: stored.countries,
        payout: stored.payout,
      },
      {
        name: 'DE autumn',
        provider: 'Media Buyers Ltd',
        flow: 'DE traffic',
        countries: ['DE'],
        payout: { model: 'cpl', amount: 12.5, currency: 'USD', by_country: {} },
      },
    );
    await page.getByRole('link', { name: 'Campaigns', exact: true }).click();
    await page.getByTestId('campaign-row').filter({ hasText: 'DE autumn' }).waitFor();
    await screenshot(page, 'campaigns');

    const accepted = await postLead(token);
    assert.equal(accepted.status, 201, accepted.text);

    // Rotation asks first; then the new token is shown and the old one is refused at once.
    await page.getByRole('link', { name: 'Traffic providers', exact: true }).click();
    const row = page.getByTestId('provider-row').filter({ hasText: 'Media Buyers Ltd' });
    await row.waitFor();
    assert.match(await row.innerText(), /127\.0\.0\.1\/32/);
    await screenshot(page, 'providers');
    await row.getByRole('link', { name: 'Media Buyers Ltd' }).click();
    await page.getByRole('button', { name: 'Rotate token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate the intake token?' });
    await dialog.getByRole('button', { name: 'Rotate token' }).click();
    await shown.waitFor();
    const rotated = (await shown.innerText()).trim();
    assert.match(rotated, TOKEN);
    assert.notEqual(rotated, token);

    const old = await postLead(token);
    assert.equal(old.status, 401, old.text);
    const fresh = await postLead(rotated);
    assert.equal(fresh.status, 201, fresh.text);
  },
);
