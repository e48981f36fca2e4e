// Every screen on a phone (390×844, issue 26 item 3): with a provider, a partner, a flow with caps, a
// campaign, leads, a role, an operator, a webhook and a key in place, each route of the dashboard,
// each kind of editor holding a record, the open menu, the lead drawer and the dialogs are measured:
// the page may not scroll sideways and no visible element may reach past the right edge, and
// axe-core finds no moderate, serious or critical violation (the phone half of a11y.test.ts, which
// checks the desktop). Every screen is visited before the test fails, so one run names every
// offender (its selector, text and right edge, or its rule); a screenshot of each is kept.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { sampleLead } from '../distribution-world.js';
import { defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import { ADMIN } from '../processes.js';
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
import { DIALOGS, SCREENS, screenName } from './screens.js';

const PHONE = { width: 390, height: 844 };

/** Waits for the screen to settle, photographs it, names what is wider than the phone and runs axe-core. */
async function measure(page: Page, name: string, failures: string[]) {
  await page.waitForLoadState('networkidle');
  await waitUntil(`${name} to load`, async () => (await page.getByLabel('Loading').count()) === 0);
  await screenshot(page, `phone-${name}`);
  const { scrollWidth, lines } = await wideElements(page);
  if (scrollWidth > PHONE.width || lines.length) {
    failures.push(`${name}: page ${scrollWidth} px wide\n${lines.map((l) => `  - ${l}`).join('\n')}`);
  }
  await assertAccessible(page, `${name} (phone)`).catch((err: Error) => failures.push(err.message));
}

test(
  'every screen, editor, drawer and dialog fits a 390 px phone and passes axe-core there',
  { timeout: 600_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const base = `http://127.0.0.1:${server.port}`;

    // Some of everything, so tables, cap bars and editors show data rather than empty states.
    const refuser = await startPartner(t, rejecting(200, 'no capacity today for this country'));
    const partner = await client.create('/api/partners', {
      name: 'Alpha Partner Worldwide Trading',
      integration: defaultIntegration(refuser.url),
    });
    const flow = await client.create('/api/flows', {
      name: 'DE and AT traffic, weekdays',
      targets: [{ partner_id: partner.id, priority: 1, weight: 100, daily_cap: 50, country_caps: { DE: 40, AT: 10 } }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Media buyer' });
    const campaign = await client.create('/api/campaigns', {
      name: 'Summer DE',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 1 },
    });
    for (let i = 0; i < 4; i++) {
      const res = await client.send('POST', '/api/intake/leads', sampleLead(), provider.token);
      assert.equal(res.status, 201, res.text);
    }
    // The newest (the drawer's) raises the flags one lead can raise by itself (a French toll-free
    // phone, a disposable email, a US address for a lead from DE): their labels must fit too.
    const flagged = await client.send(
      'POST',
      '/api/intake/leads',
      sampleLead({ phone: '+33800123456', email: 'phone.layout@mailinator.com', ip: '8.8.8.8' }),
      provider.token,
    );
    assert.equal(flagged.status, 201, flagged.text);
    const role = await client.create('/api/roles', { name: 'Desk', permissions: ['leads:view', 'flows:view'] });
    const operator = await client.create('/api/operators', {
      name: 'Dana Desk',
      email: 'dana.desk.with.a.long.address@example.test',
      password: 'desk-password-123',
      role_id: role.id,
      current_password: ADMIN.password,
    });
    const webhook = await client.create('/api/webhooks', {
      name: 'CRM sink',
      url: 'http://127.0.0.1:9/hook',
      event_types: ['lead.received'],
    });
    await client.create('/api/api-keys', { name: 'Reporting script', scopes: ['leads:view'] });
    await client.create('/api/blocklists', {
      kind: 'email',
      value: 'someone.with.a.rather.long.address@subdomain.example.com',
      note: 'chargeback fraud, reported by the partner on the phone',
    });
    await client.create('/api/blocklists', {
      kind: 'ip',
      value: '2001:db8:abcd:1234::/64',
      traffic_provider_id: provider.id,
    });

    const { page } = await openBrowser(t);
    await page.setViewportSize(PHONE);
    const failures: string[] = [];

    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await measure(page, 'login', failures);
    await signIn(page, server);
    await page.getByTestId('operator-name').waitFor();

    const screens: [string, string][] = [
      ...SCREENS.map((path): [string, string] => [screenName(path), path]),
      ['analytics-partners', '/analytics?view=partners'],
      ['analytics-crg', '/analytics?view=crg'],
      ['partner-editor', `/partners/${partner.id}`],
      ['flow-editor', `/flows/${flow.id}`],
      ['campaign-editor', `/campaigns/${campaign.id}`],
      ['provider-editor', `/traffic-providers/${provider.id}`],
      ['operator-editor', `/settings/operators/${operator.id}`],
      ['role-editor', `/settings/roles/${role.id}`],
      ['webhook-editor', `/settings/webhooks/${webhook.id}`],
    ];
    for (const [name, path] of screens) {
      await page.goto(`${base}${path}`);
      await page.getByTestId('operator-name').waitFor();
      await measure(page, name, failures);
    }

    // The menu, opened by the burger.
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Open menu' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads' }).waitFor();
    await measure(page, 'menu', failures);

    // The drawers and dialogs (the last one rotates the provider's token: its leads are in already).
    for (const [name, open] of DIALOGS) {
      await open(page, base, { flowId: flow.id, providerId: provider.id });
      await measure(page, name, failures);
    }

    assert.ok(failures.length === 0, `screens wider than a phone or failing axe-core:\n${failures.join('\n')}`);
  },
);
