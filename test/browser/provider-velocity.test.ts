// A traffic provider's velocity limits in a real browser: a window past 7 days comes back from
// the API to its field; an IP limit of 2 in a 2-hour window is saved (leaving first asks about the
// unsaved change) and shown again after a reload; of three leads posted from one IP with the
// provider's token, the third is flagged velocity_ip; clearing the limit saves null. An operator
// who may only view providers sees the section but cannot change it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Locator } from 'playwright-core';
import { defaultIntegration } from '../partner-server.js';
import { sampleLead } from '../distribution-world.js';
import { request } from '../processes.js';
import { ADMIN, chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient } from './harness.js';

/** The message the field shows for its error (Mantine links it by aria-describedby). */
async function errorAt(field: Locator) {
  assert.equal(await field.getAttribute('aria-invalid'), 'true');
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(' ');
  return field
    .page()
    .locator(`[id="${ids.find((d) => d.endsWith('-error'))}"]`)
    .innerText();
}

test(
  'velocity limits are edited in the provider editor and flag the leads past them',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    // Nothing listens on port 9: leads are stored and their delivery fails, which is all we need.
    const partner = await client.create('/api/partners', {
      name: 'Alpha Partner',
      integration: defaultIntegration('http://127.0.0.1:9/leads'),
    });
    const flow = await client.create('/api/flows', {
      name: 'Main',
      targets: [{ partner_id: partner.id, priority: 1 }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Fast Clicks' });
    await client.create('/api/campaigns', {
      name: 'C',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });
    const velocity = async () => (await client.send('GET', `/api/traffic-providers/${provider.id}`)).json().velocity;
    assert.deepEqual(await velocity(), { window_minutes: 60, ip: null, phone: null, email_domain: null });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.waitForURL((url) => url.pathname === '/');
    const editor = `http://127.0.0.1:${server.port}/traffic-providers/${provider.id}`;
    await page.goto(editor);
    const window = page.getByLabel('Velocity window', { exact: true });
    const unit = page.getByRole('combobox', { name: 'Window unit' });
    const ipLimit = page.getByLabel('Same IP address', { exact: true });
    await window.waitFor();
    // The default (60 minutes, no limit) reads as 1 hour with empty limits.
    assert.equal(await window.inputValue(), '1');
    assert.equal(await unit.inputValue(), 'hours');
    for (const label of ['Same IP address', 'Same phone number', 'Same email domain'])
      assert.equal(await page.getByLabel(label, { exact: true }).inputValue(), '');

    // Past 7 days: the API's message shows at the window.
    await ipLimit.fill('2');
    await window.fill('8');
    await unit.selectOption('days');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('provider-errors').waitFor();
    assert.match(await errorAt(window), /10080/);
    // The banner lists it too, by the field's name.
    assert.match(await page.getByTestId('provider-errors').innerText(), /Velocity window: must be at most 10080/);
    assert.equal((await velocity()).ip, null, 'nothing was saved');

    // Unsaved: leaving asks first (dismissed here, the edit stays).
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (d) => {
        resolve(d.message());
        void d.dismiss();
      }),
    );
    await page.getByRole('link', { name: 'Traffic providers', exact: true }).click();
    assert.match(await asked, /unsaved changes/);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    assert.match(page.url(), new RegExp(`/traffic-providers/${provider.id}$`));
    assert.equal(await ipLimit.inputValue(), '2', 'the edit stays');

    await unit.selectOption('hours');
    await window.fill('2');
    assert.notEqual(await window.getAttribute('aria-invalid'), 'true', 'an edit clears its message');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('provider-saved').waitFor();
    assert.deepEqual(await velocity(), { window_minutes: 120, ip: 2, phone: null, email_domain: null });
    await page.reload();
    await window.waitFor();
    assert.equal(await window.inputValue(), '2');
    assert.equal(await unit.inputValue(), 'hours');
    assert.equal(await ipLimit.inputValue(), '2');
    await screenshot(page, 'provider-velocity');

    // Three leads from one IP (each its own email and phone): the third has two earlier ones.
    const flags: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(server.port, 'POST', '/api/intake/leads', sampleLead({ ip: '198.51.100.7' }), {
        authorization: `Bearer ${provider.token}`,
      });
      assert.equal(res.status, 201, res.text);
      flags.push((await client.send('GET', `/api/leads/${res.json().id}`)).json().flags);
    }
    assert.ok(!flags[0].includes('velocity_ip') && !flags[1].includes('velocity_ip'), JSON.stringify(flags));
    assert.ok(flags[2].includes('velocity_ip'), JSON.stringify(flags));

    // Cleared: no limit, saved as null.
    await ipLimit.fill('');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('provider-saved').waitFor();
    assert.deepEqual(await velocity(), { window_minutes: 120, ip: null, phone: null, email_domain: null });

    // Without traffic_providers:edit the section is shown, not editable.
    const role = await client.create('/api/roles', { name: 'Viewer', permissions: ['traffic_providers:view'] });
    const viewer = { name: 'Vera Viewer', email: 'vera@example.com', password: 'viewer-password-123' };
    await client.create('/api/operators', { ...viewer, role_id: role.id, current_password: ADMIN.password });
    const { page: other } = await openBrowser(t);
    await other.goto(`http://127.0.0.1:${server.port}/login`);
    await other.getByLabel('Email').fill(viewer.email);
    await other.getByLabel('Password').fill(viewer.password);
    await other.getByRole('button', { name: 'Sign in' }).click();
    await other.waitForURL((url) => url.pathname !== '/login');
    await other.goto(editor);
    await other.getByText('You can view traffic providers but not change them.').waitFor();
    assert.equal(await other.getByLabel('Velocity window', { exact: true }).inputValue(), '2');
    for (const label of ['Velocity window', 'Same IP address', 'Same phone number', 'Same email domain'])
      assert.equal(await other.getByLabel(label, { exact: true }).isDisabled(), true, `${label} is read-only`);
    assert.equal(await other.getByRole('combobox', { name: 'Window unit' }).isDisabled(), true);
  },
);
