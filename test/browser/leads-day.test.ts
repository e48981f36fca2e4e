// A working day on the Leads screen (issue 13): a search typed with spaces finds the lead; the
// table and the Overview refresh (a lead that arrived meanwhile appears, the time moves, a pause
// holds across a reload); a rejected lead is redelivered from its drawer to one partner.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { accepting, defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshotsAtEverySize,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const updatedAt = async (page: Page) => Number(await page.getByTestId('live-updated').getAttribute('data-updated-at'));

test(
  'Leads: search with spaces, live refresh and pause, redeliver from the drawer; Overview refreshes',
  { timeout: 180_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const refuser = await startPartner(t, rejecting(200, 'no capacity today'));
    const taker = await startPartner(t, accepting());
    const bad = await api.create('/api/partners', {
      name: 'Refuser Inc',
      integration: defaultIntegration(refuser.url),
    });
    await api.create('/api/partners', { name: 'Taker Ltd', integration: defaultIntegration(taker.url) });
    await api.create('/api/partners', {
      name: 'France Only',
      countries: ['FR'],
      integration: defaultIntegration(taker.url),
    });
    const flow = await api.create('/api/flows', {
      name: 'Refusing flow',
      targets: [{ partner_id: bad.id, priority: 1 }],
    });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
    await api.create('/api/campaigns', {
      name: 'Campaign',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });
    let n = 0;
    const post = async (first_name: string, last_name: string) => {
      n++;
      const res = await api.send(
        'POST',
        '/api/intake/leads',
        {
          first_name,
          last_name,
          email: `l${n}@example.com`,
          phone: `+4915112${String(345670 + n)}`,
          country: 'DE',
          ip: '203.0.113.7',
        },
        provider.token,
      );
      assert.equal(res.status, 201, res.text);
      assert.equal(res.json().status, 'rejected');
      return res.json().id as string;
    };
    const ada = await post('Ada', 'Lovelace');
    await post('Bob', 'Other');

    const { page } = await openBrowser(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, server);
    await page.getByRole('link', { name: 'Leads' }).click();
    await page.waitForURL('**/leads');
    const rows = page.getByTestId('lead-row');
    const rowCount = (k: number) => waitUntil(`${k} lead rows`, async () => (await rows.count()) === k);
    await rowCount(2);

    // Item 2: typed key by key, the space between the names stays, and the search finds Ada.
    const search = page.getByRole('textbox', { name: 'Search' });
    await search.pressSequentially('Ada Lovelace');
    assert.equal(await search.inputValue(), 'Ada Lovelace');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]q=Ada(\+|%20)Lovelace/);
    await rowCount(1);
    assert.equal(await rows.first().getAttribute('data-lead-id'), ada);
    await page.getByRole('button', { name: 'Reset' }).click();
    await rowCount(2);

    // Item 4: a lead that arrives is shown after a refresh, and the time of the data moves on.
    await waitUntil('a first update time', async () => (await updatedAt(page)) > 0);
    const before = await updatedAt(page);
    await post('Carl', 'Late');
    await page.getByTestId('live-refresh').click();
    await rowCount(3);
    await waitUntil('a later update time', async () => (await updatedAt(page)) > before);
    await assertAccessible(page, 'Leads');
    await screenshotsAtEverySize(page, 'leads-live');

    // Paused, it says so, and stays paused after a reload (remembered in this browser).
    await page.getByTestId('live-pause').click();
    assert.equal(await page.getByTestId('live-pause').innerText(), 'Resume');
    assert.equal(await page.getByTestId('live-pause').getAttribute('aria-pressed'), 'true');
    await page.reload();
    await rowCount(3);
    assert.equal(await page.getByTestId('live-pause').innerText(), 'Resume');
    assert.match(await page.getByTestId('live-updated').innerText(), /paused/);
    await page.getByTestId('live-pause').click();
    assert.equal(await page.getByTestId('live-pause').innerText(), 'Pause');

    // Item 5: Ada's lead, rejected, is redelivered from its drawer to one partner, which takes it.
    await rows.filter({ hasText: 'Lovelace' }).click();
    const drawer = page.getByTestId('lead-drawer');
    await drawer.waitFor();
    assert.equal(await drawer.getByTestId('lead-status').textContent(), 'rejected');
    await drawer.getByRole('button', { name: 'Redeliver' }).click();
    const dialog = page.getByRole('dialog', { name: 'Redeliver lead' });
    await dialog.waitFor();
    await dialog.getByLabel('One partner (one attempt)').check();
    // Confirming without a partner names what is missing, at the field.
    await page.getByTestId('redeliver-confirm').click();
    await dialog.getByText('Choose the partner to send to.').waitFor();
    await dialog.getByRole('textbox', { name: 'Partner' }).click();
    // A partner that does not take the lead's country (DE) is shown disabled, saying why, after the others.
    const options = page.getByRole('option');
    await options.first().waitFor();
    assert.deepEqual(await options.allInnerTexts(), ['Refuser Inc', 'Taker Ltd', 'France Only (does not take DE)']);
    assert.equal(
      await page.getByRole('option', { name: 'France Only (does not take DE)' }).getAttribute('data-combobox-disabled'),
      'true',
    );
    await page.getByRole('option', { name: 'Taker Ltd' }).click();
    await assertAccessible(page, 'Redeliver dialog');
    await screenshotsAtEverySize(page, 'lead-redeliver');
    await page.getByTestId('redeliver-confirm').click();
    const result = dialog.getByTestId('redeliver-result');
    await result.waitFor();
    assert.equal(await result.innerText(), 'delivered to Taker Ltd');
    assert.equal(taker.received.length, 1, 'the chosen partner was called once');
    await dialog.getByRole('button', { name: 'Done' }).click();
    await waitUntil(
      'the drawer to show the delivery',
      async () => (await drawer.getByTestId('lead-status').textContent()) === 'delivered',
    );
    assert.equal(await drawer.getByTestId('attempt').count(), 2, 'the refusal and the new delivery');
    assert.equal(
      await drawer.getByRole('button', { name: 'Redeliver' }).count(),
      0,
      'a delivered lead offers no redelivery',
    );

    // The redelivery is in the audit log.
    const audit = await api.send('GET', '/api/audit-log?action=lead.redelivered');
    assert.equal(audit.status, 200, audit.text);
    assert.equal(audit.json().data.length, 1);
    // …where the screen names who did it and to which lead, not their ids.
    await page.keyboard.press('Escape');
    await page.goto(`http://127.0.0.1:${server.port}/audit?action=lead.redelivered`);
    await page.getByTestId('audit-target').first().waitFor();
    assert.equal(await page.getByTestId('audit-target').first().innerText(), 'Lead Ada Lovelace');
    assert.equal(await page.getByTestId('audit-target').first().getAttribute('title'), `lead ${ada}`);
    assert.equal(await page.getByTestId('audit-actor').first().innerText(), 'Owner');
    await screenshotsAtEverySize(page, 'audit-names');

    // Overview: the same live status; a refresh moves its time on.
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.getByTestId('live-status').waitFor();
    await waitUntil('the Overview loaded', async () => (await updatedAt(page)) > 0);
    const overviewBefore = await updatedAt(page);
    await page.getByTestId('live-refresh').click();
    await waitUntil('a later Overview time', async () => (await updatedAt(page)) > overviewBefore);
    await assertAccessible(page, 'Overview');
    await screenshotsAtEverySize(page, 'overview-live');
  },
);
