// Narrow roles in a real browser (issue 26): operators whose roles hold one or two permissions
// sign in, open every screen their menu offers (and the lead drawer, a partner, the bell), and
// no request the dashboard makes is refused with 403; the menu offers nothing else. A whole email
// searched without leads:contacts says that permission is needed instead of "0 leads"; with it the
// lead is found. The same walk runs on a phone (390×844), the menu behind the burger, where the
// Leads screen with that message must not scroll sideways. Past the 10,000 the search counts,
// "Count exactly" shows the exact figure.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import type { Child, ServerClient } from '../processes.js';
import { accepting, defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import {
  ADMIN,
  apiGet,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  signInAs,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const EMAIL = 'grace.tester@example.com';
const PHONE = { width: 390, height: 844 };

/** A partner that takes leads, one that refuses them, a flow to each, a provider with a campaign per flow, two leads. */
async function world(t: Parameters<typeof startPartner>[0], api: ServerClient) {
  const taker = await startPartner(t, accepting());
  const refuser = await startPartner(t, rejecting(200, 'no capacity today'));
  const good = await api.create('/api/partners', { name: 'Taker Ltd', integration: defaultIntegration(taker.url) });
  const bad = await api.create('/api/partners', { name: 'Refuser Inc', integration: defaultIntegration(refuser.url) });
  const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
  for (const [i, partner] of [good, bad].entries()) {
    const flow = await api.create('/api/flows', {
      name: `Flow ${i}`,
      targets: [{ partner_id: partner.id, priority: 1 }],
    });
    const campaign = await api.create('/api/campaigns', {
      name: `Campaign ${i}`,
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });
    const lead = {
      first_name: i ? 'Edsger' : 'Grace',
      last_name: 'Tester',
      email: i ? 'edsger.tester@example.com' : EMAIL,
      phone: `+4915112${345670 + i}`,
      country: 'DE',
      ip: '203.0.113.7',
      campaign_id: campaign.id,
    };
    const res = await api.send('POST', '/api/intake/leads', lead, provider.token);
    assert.equal(res.status, 201, res.text);
  }
}

/** Each narrow role and the menu it should see (besides "API docs"), in the menu's order. */
const ROLES: { name: string; permissions: string[]; nav: string[] }[] = [
  { name: 'Leads only', permissions: ['leads:view'], nav: ['Leads', 'Review queue', 'API keys', 'Profile'] },
  {
    name: 'Leads and contacts',
    permissions: ['leads:view', 'leads:contacts'],
    nav: ['Leads', 'Review queue', 'API keys', 'Profile'],
  },
  {
    name: 'Lead editor',
    permissions: ['leads:view', 'leads:edit'],
    nav: ['Leads', 'Re-injection', 'Import', 'Review queue', 'API keys', 'Profile'],
  },
  { name: 'Analytics only', permissions: ['analytics:view'], nav: ['Overview', 'Analytics', 'API keys', 'Profile'] },
  { name: 'Partners only', permissions: ['partners:view'], nav: ['Partners', 'API keys', 'Profile'] },
  { name: 'Flows only', permissions: ['flows:view'], nav: ['Flows', 'Cap usage', 'API keys', 'Profile'] },
  { name: 'Campaigns only', permissions: ['campaigns:view'], nav: ['Campaigns', 'API keys', 'Profile'] },
  {
    name: 'Providers only',
    permissions: ['traffic_providers:view'],
    nav: ['Traffic providers', 'API keys', 'Profile'],
  },
  { name: 'Operators only', permissions: ['operators:view'], nav: ['API keys', 'Operators', 'Profile'] },
  { name: 'Quality only', permissions: ['quality:view'], nav: ['Blocklists', 'Flag weights', 'API keys', 'Profile'] },
  {
    name: 'Leads and quality',
    permissions: ['leads:view', 'quality:view'],
    nav: ['Leads', 'Review queue', 'Blocklists', 'Flag weights', 'API keys', 'Profile'],
  },
  {
    name: 'Settings viewer',
    permissions: ['roles:view', 'settings:view', 'hosting:view', 'webhooks:view', 'audit:view'],
    nav: ['API keys', 'Roles', 'Security', 'Hosting', 'Webhooks', 'Audit log', 'Profile'],
  },
];

/** On these list screens one record is opened too (its editor loads what it offers). */
const RECORD: Record<string, string> = {
  Partners: 'Taker Ltd',
  Flows: 'Flow 1',
  Campaigns: 'Campaign 1',
  'Traffic providers': 'Affiliate One',
  Operators: 'Leads only operator',
  Roles: 'Leads only',
};

/** The menu, opened by the burger on a phone (choosing a link closes it again). */
async function openMenu(page: Page, phone: boolean) {
  const nav = page.getByRole('navigation', { name: 'Main' });
  if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
  await nav.getByRole('link').first().waitFor();
  return nav;
}

/** Lets the screen's requests finish (no request for 500 ms). */
const settle = (page: Page) => page.waitForLoadState('networkidle');

/** The Leads screen, the search by whole email, the filters offered and a lead's drawer, as each role sees them. */
async function tryLeads(page: Page, permissions: string[], phone: boolean) {
  const filters = page.getByRole('form', { name: 'Lead filters' });
  await page.getByTestId('more-filters-toggle').click();
  await settle(page);
  for (const [label, permission] of [
    ['Partner', 'partners:view'],
    ['Traffic provider', 'traffic_providers:view'],
    ['Campaign', 'campaigns:view'],
    ['Flow', 'flows:view'],
  ]) {
    const shown = await filters.getByRole('textbox', { name: label, exact: true }).count();
    assert.equal(shown, permissions.includes(permission) ? 1 : 0, `the ${label} filter needs ${permission}`);
  }
  await filters.getByLabel('Search').fill(EMAIL);
  await filters.getByRole('button', { name: 'Apply filters' }).click();
  if (permissions.includes('leads:contacts')) {
    await waitUntil('the lead found by its email', async () => (await page.locator('tbody tr').count()) === 1);
    assert.match(await page.locator('tbody tr').innerText(), /Grace/);
  } else {
    // Not "No leads match": the search says which permission a whole email needs.
    const error = page.getByTestId('leads-error');
    await error.waitFor();
    assert.match(await error.innerText(), /^Search: is a whole email address: .*needs the permission leads:contacts/);
    assert.equal(await page.getByTestId('leads-empty').count(), 0);
    if (phone) {
      const width = Number(await page.evaluate('document.documentElement.scrollWidth'));
      assert.ok(width <= PHONE.width, `the Leads screen with the message is ${width} px wide on a 390 px phone`);
    }
    await screenshot(page, `narrow-role-contact-search${phone ? '-phone' : ''}`);
  }
  await filters.getByRole('button', { name: 'Reset' }).click();
  await waitUntil('both leads listed', async () => (await page.locator('tbody tr').count()) === 2);
  // The refused lead's drawer; an editor's redelivery offers only what the role can pick from.
  await page.locator('tbody tr').filter({ hasText: 'Edsger' }).getByText('Edsger Tester').click();
  const drawer = page.getByRole('dialog');
  await drawer.getByText('no capacity today').first().waitFor();
  await settle(page);
  if (permissions.includes('leads:edit')) {
    await drawer.getByRole('button', { name: 'Redeliver' }).click();
    const modal = page.getByRole('dialog', { name: /Redeliver/ });
    await modal.getByText('Its own flow').waitFor();
    assert.equal(await modal.getByText('Another flow').count(), 0, 'picking a flow needs flows:view');
    assert.equal(
      await modal.getByText('One partner (one attempt)').count(),
      0,
      'picking a partner needs partners:view',
    );
    await page.keyboard.press('Escape');
  }
  await page.keyboard.press('Escape');
}

/**
 * Each role's operator signs in, opens every screen its menu offers (and a record on list screens,
 * the Leads checks, the bell) and signs out; no response along the way may be a 403.
 */
async function walk(t: TestContext, roles: typeof ROLES, phone: boolean) {
  const { server, client: api } = await startServerAndClient(t);
  await world(t, api);
  const { page } = await openBrowser(t);
  if (phone) await page.setViewportSize(PHONE);
  const refused: string[] = [];
  let who = '';
  page.on('response', (r) => {
    if (r.status() === 403) refused.push(`${who}: ${r.request().method()} ${new URL(r.url()).pathname}`);
  });

  for (const [i, role] of roles.entries()) {
    who = role.name;
    const made = await api.create('/api/roles', { name: role.name, permissions: role.permissions });
    const operator = {
      name: `${role.name} operator`,
      email: `narrow${i}@example.com`,
      password: `narrow-password-${i}-xyz`,
    };
    await api.create('/api/operators', { ...operator, role_id: made.id, current_password: ADMIN.password });
    await signInAs(page, server, operator);
    await settle(page);
    const links = (await (await openMenu(page, phone)).getByRole('link').allInnerTexts())
      .map((l) => l.trim())
      .filter((l) => l !== 'API docs ↗');
    assert.deepEqual(links, role.nav, `${role.name}: the menu`);
    if (phone) await page.getByRole('button', { name: 'Close menu' }).click();

    for (const label of role.nav) {
      await (await openMenu(page, phone)).getByRole('link', { name: label, exact: true }).click();
      await page.getByRole('heading', { level: 1 }).first().waitFor();
      await settle(page);
      const alerts = await page.getByRole('alert').allInnerTexts();
      assert.ok(!alerts.some((a) => /permission|scope/i.test(a)), `${role.name} on ${label}: ${alerts.join(' | ')}`);
      if (label === 'Leads') await tryLeads(page, role.permissions, phone);
      const record = RECORD[label];
      if (record) {
        await page.getByRole('link', { name: record, exact: true }).click();
        await page.getByRole('heading', { level: 1, name: new RegExp(record) }).waitFor();
        await settle(page);
      }
    }
    await page.getByTestId('notifications-bell').click();
    await page.getByTestId('notifications').waitFor();
    await settle(page);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/login');
  }
  assert.deepEqual(refused, [], 'no screen asked for what its role cannot read');
}

test(
  'narrow roles: every screen the menu offers calls nothing the role cannot read, and the menu offers nothing else',
  { timeout: 300_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    await walk(t, ROLES, false);
  },
);

// Every role again at phone size: the whole walk adds about 50 s, so no subset is needed.
test(
  'narrow roles on a phone (390×844): the burger menu offers what the role may open, and no screen it offers is refused',
  { timeout: 300_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    await walk(t, ROLES, true);
  },
);

/** The demo-data command, writing into the running server's SQLite file (WAL lets both at it). */
function demoData(server: Child, leads: number): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: server.dataDir };
  delete env.DATABASE_URL;
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/demo-data.ts', '--leads', String(leads), '--days', '45'],
      { cwd: ROOT, env, timeout: 120_000 },
      (err, _out, stderr) => (err ? reject(new Error(`demo-data failed: ${stderr}`)) : resolve()),
    ),
  );
}

test('past 10,000 leads, "Count exactly" shows the exact figure the API counts', { timeout: 180_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client: api } = await startServerAndClient(t);
  await demoData(server, 10_050);
  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByTestId('operator-email').waitFor();
  await page.goto(`http://127.0.0.1:${server.port}/leads`);
  const total = page.getByTestId('leads-total');
  await total.filter({ hasText: '10,000+ leads' }).waitFor();
  await page.getByTestId('leads-count-exactly').click();
  await page.getByTestId('leads-exact-total').filter({ hasText: 'exactly 10,050 leads' }).waitFor();
  await screenshot(page, 'leads-count-exactly');
  const counted = await apiGet(server, '/api/leads/count', api.token);
  assert.deepEqual(counted.json(), { count: 10_050 });

  // New filters need a new count: the figure belongs to the filters it was asked for.
  await page.goto(`http://127.0.0.1:${server.port}/leads?country=DE`);
  const de = (await apiGet(server, '/api/leads/count?country=DE', api.token)).json().count as number;
  const shown = de > 10_000 ? '10,000+ leads' : `${de.toLocaleString('en-US')} leads`;
  await total.filter({ hasText: shown }).waitFor();
  if (de > 10_000) assert.equal(await page.getByTestId('leads-count-exactly').count(), 1);
  else assert.equal(await page.getByTestId('leads-count-exactly').count(), 0, 'an exact count needs no asking');
  assert.equal(await page.getByTestId('leads-exact-total').count(), 0);
});
