// Accessibility of every screen of the dashboard: axe-core (moderate, serious and critical violations) on
// each route of src/web/App.tsx (screens.ts), a list and a "new" editor of each kind, the drawers and
// dialogs, and the sign-in and setup pages, on a desktop (1440×900), with a screenshot of each. On a
// phone (390×844) phone-layout.test.ts runs axe-core on every screen it measures (the same screens
// and dialogs, the editors and the open menu too), and this test the setup page. Every screen is
// visited before the test fails, so one run names all that is wrong.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { sampleLead } from '../distribution-world.js';
import { defaultIntegration } from '../partner-server.js';
import { request, ServerClient, spawnServer, waitUntilUp } from '../processes.js';
import {
  ADMIN,
  assertAccessible,
  chromiumAvailable,
  ensureDashboardBuilt,
  openBrowser,
  screenshot,
  signIn,
  waitUntil,
} from './harness.js';
import { DIALOGS, SCREENS, screenName } from './screens.js';

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

/** Waits for the screen to settle (no request in flight, no spinner), then checks and photographs it. */
async function check(page: Page, name: string, failures: string[]) {
  await page.waitForLoadState('networkidle');
  await waitUntil(`${name} to load`, async () => (await page.getByLabel('Loading').count()) === 0);
  await screenshot(page, `a11y-${name}`);
  await assertAccessible(page, name).catch((err: Error) => failures.push(err.message));
}

test(
  'every screen of the dashboard passes axe-core on a desktop, and setup on a phone',
  { timeout: 600_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    ensureDashboardBuilt();
    // No LEADGATE_ADMIN_* variables: the server starts without an operator, so setup is shown.
    const server = await spawnServer(t, { LOG_LEVEL: 'warn', DELIVERY_RECOVERY_INTERVAL_MS: '0' });
    await waitUntilUp(server);
    const base = `http://127.0.0.1:${server.port}`;
    const { page } = await openBrowser(t);
    const failures: string[] = [];

    for (const size of [PHONE, DESKTOP]) {
      await page.setViewportSize(size);
      await page.goto(`${base}/setup`);
      await page.getByRole('button', { name: 'Create owner' }).waitFor();
      await check(page, `setup-${size.width}x${size.height}`, failures);
    }

    // The owner, and something in each list so tables (not only their empty states) are checked.
    const setup = await request(server.port, 'POST', '/api/setup', { name: 'Owner', ...ADMIN });
    assert.equal(setup.status, 201, setup.text);
    const client = await new ServerClient(server.port).login();
    t.after(() => client.close());
    const partner = await client.create('/api/partners', {
      name: 'Alpha Partner',
      integration: defaultIntegration('http://127.0.0.1:9/leads'),
    });
    const flow = await client.create('/api/flows', {
      name: 'DE traffic',
      targets: [{ partner_id: partner.id, priority: 1, weight: 100 }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Media buyer' });
    await client.create('/api/campaigns', {
      name: 'Summer DE',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 1 },
    });
    await client.create('/api/api-keys', { name: 'Reporting script', scopes: ['leads:view'] });
    await client.create('/api/blocklists', { kind: 'email', value: 'spam.er@example.com', note: 'chargeback fraud' });
    await client.create('/api/blocklists', { kind: 'ip', value: '198.51.100.0/24', traffic_provider_id: provider.id });
    // A lead (its delivery fails: nothing listens on port 9) for the Leads table and the charts.
    const lead = await request(server.port, 'POST', '/api/intake/leads', sampleLead(), {
      authorization: `Bearer ${provider.token}`,
    });
    assert.ok(lead.status < 300, lead.text);
    // And one raising fraud flags (a French phone and a disposable email for a lead from DE), listed
    // first: its row's mark and the drawer's flags are checked too.
    const flagged = await request(
      server.port,
      'POST',
      '/api/intake/leads',
      sampleLead({ phone: '+33612345678', email: 'a11y.flags@mailinator.com' }),
      { authorization: `Bearer ${provider.token}` },
    );
    assert.ok(flagged.status < 300, flagged.text);

    await page.evaluate('sessionStorage.clear()');
    await page.goto(`${base}/login`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await check(page, 'login-1440x900', failures);

    await signIn(page, server);
    await page.getByTestId('operator-name').waitFor();
    for (const path of SCREENS) {
      await page.goto(`${base}${path}`);
      await page.getByTestId('operator-name').waitFor();
      await check(page, `${screenName(path)}-1440x900`, failures);
    }
    // Drawers and dialogs too (their title bar is no second banner landmark any more).
    for (const [name, open] of DIALOGS) {
      await open(page, base, { flowId: flow.id, providerId: provider.id });
      await check(page, `${name}-1440x900`, failures);
    }

    assert.deepEqual(failures, [], failures.join('\n'));
  },
);
