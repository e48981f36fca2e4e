// Tracked autologin links in a real browser: a partner set to track its links (turned on in the
// partner editor), a lead delivered to it whose provider got Leadgate's /go link, the link opened
// twice (once "from" a US address through a trusted proxy), and the lead's drawer showing the
// opens and the country mismatch; axe-core clean, and at phone width nothing wider
// than the screen.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import { request } from '../processes.js';
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

test('a partner tracks its autologin links; the lead drawer shows the opens', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  // Behind a proxy on loopback, so an open can come "from" a public address (data: nothing is sent there).
  const { server, client: api } = await startServerAndClient(t, { TRUST_PROXY: '127.0.0.1' });
  const base = `http://127.0.0.1:${server.port}`;
  const put = await api.send('PUT', '/api/hosting/public-url', { public_base_url: base });
  assert.equal(put.status, 200, put.text);
  const taker = await startPartner(t, accepting());
  const partner = await api.create('/api/partners', {
    name: 'Tracked Ltd',
    integration: defaultIntegration(taker.url),
  });
  const flow = await api.create('/api/flows', { name: 'Flow', targets: [{ partner_id: partner.id, priority: 1 }] });
  const provider = await api.create('/api/traffic-providers', { name: 'Affiliate' });
  const campaign = await api.create('/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });

  // The switch in the partner editor turns tracking on.
  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.waitForURL((u) => !u.pathname.startsWith('/login'));
  await page.goto(`${base}/partners/${partner.id}`);
  await page.getByText('Track autologin links', { exact: true }).click();
  await page.getByRole('button', { name: 'Save', exact: true }).first().click(); // the editor's (the status sync panel has its own)
  await waitUntil('tracking saved', async () => {
    const p = await api.send('GET', `/api/partners/${partner.id}`);
    return p.json().track_autologin === true;
  });

  const res = await api.send(
    'POST',
    '/api/intake/leads',
    {
      first_name: 'Grace',
      last_name: 'Tester',
      email: 'grace@example.com',
      phone: '+4915112345670',
      country: 'DE',
      ip: '203.0.113.7',
      campaign_id: campaign.id,
    },
    provider.token,
  );
  assert.equal(res.status, 201, res.text);
  const link = res.json().autologin_url as string;
  assert.ok(link.startsWith(`${base}/go/`), link);
  for (const from of [{}, { 'x-forwarded-for': '8.8.8.8' }] as Record<string, string>[]) {
    const opened = await request(server.port, 'GET', link.slice(base.length), undefined, {
      'user-agent': 'Phone/1.0',
      ...from,
    });
    assert.equal(opened.status, 302);
  }

  await page.goto(`${base}/leads`);
  await page.getByTestId('lead-row').first().click();
  const drawer = page.getByTestId('lead-drawer');
  await drawer.getByTestId('autologin-opens').waitFor();
  assert.match(await drawer.getByTestId('autologin-opens-count').innerText(), /^Opened 2 times: first .+, last .+/);
  assert.equal(await drawer.getByTestId('autologin-open').count(), 2);
  // Newest first: the open from a US address is flagged against the DE lead; loopback has no country.
  const [fromUs, fromLoopback] = await drawer.getByTestId('autologin-open').all();
  assert.match(await fromUs.innerText(), /8\.8\.8\.8 \(US\)[\s\S]*not the lead's country[\s\S]*Phone\/1\.0/i);
  assert.match(await fromLoopback.innerText(), /127\.0\.0\.1[\s\S]*Phone\/1\.0/);
  assert.equal(await fromLoopback.getByTestId('autologin-open-mismatch').count(), 0);
  // The operator still sees the partner's own URL.
  assert.match(await drawer.getByTestId('lead-autologin').innerText(), /^https:\/\/broker\.example\/login\//);
  await assertAccessible(page, 'lead drawer with opens');

  // The Leads filter "Autologin link: Opened" keeps the lead (its value lives in the URL); on a phone.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}/leads?autologin_opened=true`);
  await page.getByTestId('lead-row').first().waitFor();
  assert.equal(await page.getByTestId('lead-row').count(), 1);
  assert.equal(await page.getByTestId('lead-row').first().getAttribute('data-lead-id'), res.json().id);
  await page.getByTestId('lead-row').first().click();
  await drawer.getByTestId('autologin-opens').waitFor();
  const { scrollWidth, lines } = await wideElements(page);
  assert.ok(scrollWidth <= 390 && lines.length === 0, `wider than a phone: ${scrollWidth}\n${lines.join('\n')}`);
  await screenshot(page, 'lead-drawer-autologin-opens');
});
