// The morning check (issue 26, item 3) on a phone (390×844) and a desktop: with a partner failing
// every call (a loopback server answering 500) and refused leads, find the failing partner, pause
// it, redeliver a refused lead and find a lead by email in at most 10 taps, every one counted by
// one helper (typing is not a tap); the outcome is checked through the API. The failing partner
// never shows as plain "active", the bell's alert opens that partner, and no screen of the check
// is wider than the phone.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { accepting, defaultIntegration, rejecting, startPartner, type PartnerHandler } from '../partner-server.js';
import {
  ADMIN,
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const MAX_TAPS = 10;

/** Every click of the check goes through here, so the count is the whole story. */
function tapCounter() {
  const taps: string[] = [];
  return {
    taps,
    async tap(what: string, target: Locator) {
      taps.push(what);
      await target.click();
    },
  };
}

async function assertNoOverflow(page: Page, width: number, screen: string) {
  const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
  assert.ok(scrollWidth <= width, `${screen}: ${scrollWidth} px wide on a ${width} px screen`);
}

async function morningCheck(t: TestContext, size: { name: string; width: number; height: number }) {
  const { server, client: api } = await startServerAndClient(t);
  const broken = await startPartner(t, rejecting(500, 'internal server error'));
  // Refuses every lead until its capacity comes back (below), then takes them.
  let refusing = true;
  const morning: PartnerHandler = (req, res) =>
    refusing ? rejecting(200, 'no capacity right now')(req, res) : accepting()(req, res);
  const refuser = await startPartner(t, morning);
  const failing = await api.create('/api/partners', {
    name: 'Failing Broker',
    integration: defaultIntegration(broken.url),
  });
  const taker = await api.create('/api/partners', {
    name: 'Morning Broker',
    integration: defaultIntegration(refuser.url),
  });
  await api.create('/api/partners', { name: 'Quiet Broker', integration: defaultIntegration(refuser.url) });
  const flow = await api.create('/api/flows', {
    name: 'Main flow',
    targets: [
      { partner_id: failing.id, priority: 1 },
      { partner_id: taker.id, priority: 2 },
    ],
  });
  const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
  await api.create('/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });
  const leads: { id: string; email: string }[] = [];
  for (let n = 1; n <= 5; n++) {
    const email = `morning${n}@example.com`;
    const res = await api.send(
      'POST',
      '/api/intake/leads',
      {
        first_name: 'Lead',
        last_name: `Number${n}`,
        email,
        phone: `+4915112${345670 + n}`,
        country: 'DE',
        ip: '203.0.113.7',
      },
      provider.token,
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json().status, 'rejected', 'the failing partner errs, the other refuses');
    leads.push({ id: res.json().id, email });
  }
  assert.equal(broken.received.length, 5, 'the failing partner was called for every lead');
  refusing = false;
  const [refused, sought] = [leads[0], leads[3]];

  const { page } = await openBrowser(t);
  await page.setViewportSize({ width: size.width, height: size.height });
  const phone = size.width < 768;
  const { taps, tap } = tapCounter();

  await page.goto(`http://127.0.0.1:${server.port}/login`);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await tap('sign in', page.getByRole('button', { name: 'Sign in' }));

  // 1. The Overview names the failing partner, with today's calls, and nothing calls it "active".
  const item = page.locator(`[data-testid="partner-health-item"][data-partner-id="${failing.id}"]`);
  await item.waitFor();
  const badge = item.getByTestId('partner-health');
  assert.equal(await badge.getAttribute('data-health'), 'failing');
  assert.equal(await badge.innerText(), 'FAILING');
  assert.match(await item.getByTestId('partner-today').innerText(), /0 delivered of 5 calls, 5 failed/);
  assert.equal(
    await page.locator(`[data-testid="partner-health-item"][data-partner-id="${taker.id}"]`).count(),
    0,
    'a partner that answers (even with refusals) is not in the list to look at',
  );
  await assertNoOverflow(page, size.width, 'Overview');
  await assertAccessible(page, `Overview with partner health (${size.name})`);
  await screenshot(page, `morning-check-overview-${size.name}`);

  // 2. Paused in one tap, right there.
  await tap('pause', item.getByRole('button', { name: 'Pause Failing Broker' }));
  await item.getByRole('button', { name: 'Resume Failing Broker' }).waitFor();
  assert.equal(await badge.getAttribute('data-health'), 'paused');

  // 3. A refused lead, redelivered from its drawer through its own flow.
  if (phone) await tap('menu', page.getByRole('button', { name: 'Open menu' }));
  await tap('Leads', page.getByRole('link', { name: 'Leads' }));
  const rows = page.getByTestId('lead-row');
  await waitUntil('5 lead rows', async () => (await rows.count()) === 5);
  await assertNoOverflow(page, size.width, 'Leads');
  await tap('the refused lead', page.locator(`[data-testid="lead-row"][data-lead-id="${refused.id}"]`));
  const drawer = page.getByTestId('lead-drawer');
  await drawer.waitFor();
  assert.equal(await drawer.getByTestId('lead-status').textContent(), 'rejected');
  await tap('redeliver', drawer.getByRole('button', { name: 'Redeliver' }));
  const dialog = page.getByRole('dialog', { name: 'Redeliver lead' });
  await tap('confirm', dialog.getByTestId('redeliver-confirm'));
  assert.match(await dialog.getByTestId('redeliver-result').innerText(), /delivered to Morning Broker/);
  await tap('done', dialog.getByRole('button', { name: 'Done' }));
  await tap('close the lead', page.locator('.mantine-Drawer-close'));
  await drawer.waitFor({ state: 'hidden' });

  // 4. A lead found by its email (typed, not tapped).
  await page.getByRole('textbox', { name: 'Search' }).fill(sought.email);
  await tap('search', page.getByRole('button', { name: 'Apply filters' }));
  await waitUntil('only the sought lead', async () => {
    const ids = await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-lead-id')));
    return ids.length === 1 && ids[0] === sought.id;
  });
  await assertNoOverflow(page, size.width, 'Leads, searched');

  assert.ok(taps.length <= MAX_TAPS, `${taps.length} taps: ${taps.join(', ')}`);
  t.diagnostic(`${size.name}: ${taps.length} taps (${taps.join(', ')})`);

  // The result, through the API: the partner paused (audited), the lead delivered by the partner
  // that took it, and the paused partner not called again.
  const p = (await api.send('GET', `/api/partners/${failing.id}`)).json();
  assert.equal(p.status, 'paused');
  const audit = (await api.send('GET', '/api/audit-log?action=partner.updated')).json().data;
  assert.deepEqual(
    audit.map((a: any) => [a.target_id, a.details.changes]),
    [[failing.id, { status: 'paused' }]],
  );
  const lead = (await api.send('GET', `/api/leads/${refused.id}`)).json();
  assert.deepEqual([lead.status, lead.partner_id], ['delivered', taker.id]);
  assert.equal(broken.received.length, 5, 'the paused partner was not called by the redelivery');
  const health = (await api.send('GET', '/api/partners/health')).json();
  assert.equal(health.data.find((h: any) => h.id === failing.id).health, 'paused');

  // The Partners list shows the same health, and resumes it in one tap.
  if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('link', { name: 'Partners' }).click();
  const row = page.locator(`[data-testid="partner-row"][data-partner-id="${failing.id}"]`);
  assert.equal(await row.getByTestId('partner-health').getAttribute('data-health'), 'paused');
  // Shown from the cache first, then refreshed on opening: the redelivery's call counts.
  const takerToday = page
    .locator(`[data-testid="partner-row"][data-partner-id="${taker.id}"]`)
    .getByTestId('partner-today');
  await waitUntil("the redelivered lead in the taking partner's day", async () =>
    /1 delivered of 6 calls, 5 refused/.test(await takerToday.innerText()),
  );
  await assertNoOverflow(page, size.width, 'Partners');
  await assertAccessible(page, `Partners with health (${size.name})`);
  await screenshot(page, `morning-check-partners-${size.name}`);
  await row.getByRole('button', { name: 'Resume Failing Broker' }).click();
  await row.getByRole('button', { name: 'Pause Failing Broker' }).waitFor();
  assert.equal((await api.send('GET', `/api/partners/${failing.id}`)).json().status, 'active');

  // The bell's alert about the failing partner is a link that opens that partner.
  await page.getByRole('button', { name: /^Notifications/ }).click();
  const note = page.getByTestId('notifications').getByRole('link', { name: /Failing Broker/ });
  await note.waitFor();
  await assertAccessible(page, `notifications (${size.name})`);
  await assertNoOverflow(page, size.width, 'notifications');
  await note.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(`**/partners/${failing.id}`);
  await page.getByTestId('notifications').waitFor({ state: 'hidden' });
  if (phone) return;

  // With partners:view alone: the health shows, on the Overview's welcome and the list, but no pause.
  const role = await api.create('/api/roles', { name: 'Partner desk', permissions: ['partners:view'] });
  const desk = { email: 'desk@example.test', password: 'desk-password-123' };
  await api.create('/api/operators', { ...desk, name: 'Dana', role_id: role.id, current_password: ADMIN.password });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/login');
  await page.getByLabel('Email').fill(desk.email);
  await page.getByLabel('Password').fill(desk.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('overview-welcome').getByTestId('partner-health-card').waitFor();
  await page.getByTestId('partner-health-fine').waitFor();
  await page.getByRole('link', { name: 'Partners', exact: true }).first().click();
  await waitUntil('three health badges', async () => (await page.getByTestId('partner-health').count()) === 3);
  assert.equal(await page.getByTestId('partner-pause').count(), 0, 'no pause or resume without partners:edit');
}

for (const size of [
  { name: 'phone', width: 390, height: 844 },
  { name: 'desktop', width: 1440, height: 900 },
])
  test(
    `the morning check on a ${size.name} (${size.width}×${size.height}) takes at most ${MAX_TAPS} taps`,
    { timeout: 180_000 },
    async (t) => {
      if (!chromiumAvailable(t)) return;
      await morningCheck(t, size);
    },
  );
