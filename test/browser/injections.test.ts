// Re-injection in a real browser: rejected leads filtered on the Leads screen, a job built from
// those filters (its preview count shown first), its progress watched, paused and resumed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepting, defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const LEADS = 5;

test(
  'an operator re-injects the filtered leads, watches the job, pauses and resumes it',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t, { INJECTION_INTERVAL_MS: '500' });
    const refuser = await startPartner(t, rejecting(200, 'no capacity today'));
    const taker = await startPartner(t, accepting());
    const no = await api.create('/api/partners', { name: 'Refuser Inc', integration: defaultIntegration(refuser.url) });
    const yes = await api.create('/api/partners', { name: 'Taker Ltd', integration: defaultIntegration(taker.url) });
    const first = await api.create('/api/flows', { name: 'First flow', targets: [{ partner_id: no.id, priority: 1 }] });
    await api.create('/api/flows', { name: 'Second flow', targets: [{ partner_id: yes.id, priority: 1 }] });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
    await api.create('/api/campaigns', {
      name: 'Campaign',
      traffic_provider_id: provider.id,
      flow_id: first.id,
      payout: { model: 'cpl', amount: 10 },
    });
    for (let i = 0; i < LEADS; i++) {
      const res = await api.send(
        'POST',
        '/api/intake/leads',
        {
          first_name: 'Grace',
          last_name: `Tester${i}`,
          email: `again${i}@example.com`,
          phone: `+4915112${String(345670 + i)}`,
          country: 'DE',
          ip: '203.0.113.7',
        },
        provider.token,
      );
      assert.equal(res.json().status, 'rejected', res.text);
    }

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/leads?status=rejected`);
    await page
      .getByTestId('lead-row')
      .nth(LEADS - 1)
      .waitFor();
    await page.getByRole('button', { name: 'Re-inject' }).click();
    const dialog = page.getByRole('dialog');
    await waitUntil('the preview count', async () =>
      /5 leads match/.test(await dialog.getByTestId('reinject-count').innerText()),
    );
    await dialog.getByRole('textbox', { name: 'Send through flow' }).click();
    await page.getByRole('option', { name: 'Second flow' }).click();
    await assertAccessible(page, 'reinject-dialog');
    await dialog.getByRole('button', { name: 'Start job' }).click();
    await page.waitForURL('**/leads/injections');

    const row = page.getByTestId('injection-row');
    // The badge's text as the DOM holds it (the theme shows it in capitals).
    const state = async () => (await row.getByTestId('injection-state').textContent())?.trim();
    const progress = async () => Number(/^(\d+) of/.exec(await row.getByTestId('injection-progress').innerText())?.[1]);
    await waitUntil('a first lead sent', async () => (await progress()) >= 1);
    await row.getByRole('button', { name: 'Pause' }).click();
    await waitUntil('the job paused', async () => (await state()) === 'paused');
    const [job] = (await api.send('GET', '/api/injections')).json().data;
    const sentAtPause = taker.received.length;
    await new Promise((r) => setTimeout(r, 2000)); // four ticks
    assert.equal(taker.received.length, sentAtPause, 'nothing is sent while paused');
    assert.ok(sentAtPause < LEADS, 'paused mid-job');
    await screenshot(page, 'injections');
    await assertAccessible(page, 'injections');

    await row.getByRole('button', { name: 'Resume' }).click();
    await waitUntil('the job done', async () => (await state()) === 'done', 30_000);
    assert.equal(await progress(), LEADS);
    assert.equal(taker.received.length, LEADS, 'each lead sent once to the second flow');
    const done = (await api.send('GET', `/api/injections/${job.id}`)).json();
    assert.deepEqual([done.delivered, done.left], [LEADS, 0]);
  },
);
