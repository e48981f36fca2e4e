// The compact Leads table (issue 13, item 7) and actions on several leads (item 5): the common
// filters in one block with the rest folded away, one-line rows, the total, sorting by a date
// column, rows reached and opened by keyboard, the sale-status picker fed by the values in use,
// and a selection exported and redelivered, each confirmed and audited.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { accepting, defaultIntegration, rejecting, startPartner } from '../partner-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  screenshotsAtEverySize,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const focusedLeadId = (page: Page) =>
  page.evaluate('document.activeElement?.getAttribute("data-lead-id") ?? null') as Promise<string | null>;

test(
  'Leads table: compact filters, one-line rows, total, sorting, keyboard, sale-status picker, bulk export and redeliver',
  { timeout: 180_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const taker = await startPartner(t, accepting());
    const refuser = await startPartner(t, rejecting(200, 'no capacity today'));
    const good = await api.create('/api/partners', { name: 'Taker Ltd', integration: defaultIntegration(taker.url) });
    const bad = await api.create('/api/partners', {
      name: 'Refuser Inc',
      integration: defaultIntegration(refuser.url),
    });
    const goodFlow = await api.create('/api/flows', {
      name: 'Good flow',
      targets: [{ partner_id: good.id, priority: 1 }],
    });
    const badFlow = await api.create('/api/flows', {
      name: 'Bad flow',
      targets: [{ partner_id: bad.id, priority: 1 }],
    });
    const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
    const payout = { model: 'cpl', amount: 10 };
    const goodCampaign = await api.create('/api/campaigns', {
      name: 'Good',
      traffic_provider_id: provider.id,
      flow_id: goodFlow.id,
      payout,
    });
    const badCampaign = await api.create('/api/campaigns', {
      name: 'Bad',
      traffic_provider_id: provider.id,
      flow_id: badFlow.id,
      payout,
    });

    const ids: string[] = [];
    const post = async (first_name: string, last_name: string, campaign_id: string) => {
      const n = ids.length;
      const body = {
        first_name,
        last_name,
        campaign_id,
        email: `l${n}@example.com`,
        phone: `+4915112${String(345670 + n)}`,
        country: 'DE',
        ip: '203.0.113.7',
      };
      const res = await api.send('POST', '/api/intake/leads', body, provider.token);
      assert.equal(res.status, 201, res.text);
      ids.push(res.json().id);
      return res.json().id as string;
    };
    const first = await post('Grace', 'Hopper', goodCampaign.id);
    const second = await post('Alan', 'Turing', goodCampaign.id);
    // A long name: the row stays one line, the name ends in an ellipsis with the whole in its tooltip.
    const long = await post(
      'Bartholomew-Maximilian',
      'Featherstonehaugh-Cholmondeley-Wolfeschlegelsteinhausen',
      goodCampaign.id,
    );
    const edsger = await post('Edsger', 'Dijkstra', badCampaign.id);
    const barbara = await post('Barbara', 'Liskov', badCampaign.id);
    // Sale statuses, as the partner reports them by postback.
    for (const [lead, sale_status] of [
      [first, 'Call back'],
      [second, 'No answer'],
    ]) {
      const res = await api.send(
        'GET',
        `/api/postback/${good.postback_token}?lead_id=${lead}&sale_status=${encodeURIComponent(sale_status)}`,
        undefined,
        '',
      );
      assert.equal(res.status, 200, res.text);
    }

    const { page } = await openBrowser(t);
    await page.setViewportSize({ width: 1440, height: 900 });
    await signIn(page, server);
    await page.getByRole('link', { name: 'Leads' }).click();
    await page.waitForURL('**/leads');
    const rows = page.getByTestId('lead-row');
    const rowCount = (k: number) => waitUntil(`${k} lead rows`, async () => (await rows.count()) === k);
    await rowCount(5);

    // The total, and a filter block that leaves the screen to the table.
    assert.equal(await page.getByTestId('leads-total').innerText(), '5 leads');
    const form = page.getByRole('form', { name: 'Lead filters' });
    assert.equal(
      await page.getByRole('textbox', { name: 'Sub ID 1' }).isVisible(),
      false,
      'the rarer filters are folded away',
    );
    const formHeight = async () => (await form.boundingBox())!.height;
    assert.ok((await formHeight()) <= 0.2 * 900, `filters take ${await formHeight()} px of 900`);

    // One line per row, however long a value.
    const heights = await rows.evaluateAll((trs) => trs.map((tr) => tr.getBoundingClientRect().height));
    assert.ok(Math.max(...heights) - Math.min(...heights) < 1 && heights[0] < 50, `row heights ${heights}`);
    const longName = page.locator(`[data-lead-id="${long}"] td[title^="Bartholomew"]`);
    assert.equal(
      await longName.getAttribute('title'),
      'Bartholomew-Maximilian Featherstonehaugh-Cholmondeley-Wolfeschlegelsteinhausen',
    );

    // Sorting: newest first by default; the Registered header reverses it, and says so.
    const order = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-lead-id')));
    assert.deepEqual(await order(), [...ids].reverse());
    const registered = page.getByRole('columnheader', { name: /Registered/ });
    assert.equal(await registered.getAttribute('aria-sort'), 'descending');
    await page.getByTestId('sort-created_at').click();
    await page.waitForURL(/[?&]order=asc/);
    await waitUntil('oldest first', async () => (await order())[0] === first);
    assert.deepEqual(await order(), ids);
    assert.equal(await registered.getAttribute('aria-sort'), 'ascending');
    // By delivery date (a column shown from the chooser): only delivered leads, and the screen
    // says why the others are gone.
    await page.getByRole('button', { name: 'Columns' }).click();
    await page.getByTestId('column-chooser').getByText('Delivered', { exact: true }).click();
    await page.keyboard.press('Escape');
    await page.getByTestId('sort-delivered_at').click();
    await page.waitForURL((u) => u.searchParams.get('date_type') === 'delivered' && !u.searchParams.has('order'));
    await rowCount(3);
    await page.getByTestId('date-type-note').waitFor();
    assert.equal(await page.getByRole('columnheader', { name: /Delivered/ }).getAttribute('aria-sort'), 'descending');
    assert.equal(await registered.getAttribute('aria-sort'), null);
    await page.goto(`http://127.0.0.1:${server.port}/leads`);
    await rowCount(5);

    // Keyboard: rows take focus, arrows move between them, Enter opens the focused one.
    await rows.first().focus();
    assert.equal(await focusedLeadId(page), barbara);
    await page.keyboard.press('ArrowDown');
    assert.equal(await focusedLeadId(page), edsger);
    await page.keyboard.press('End');
    assert.equal(await focusedLeadId(page), first);
    await page.keyboard.press('ArrowUp');
    assert.equal(await focusedLeadId(page), second);
    await page.keyboard.press('Enter');
    const drawer = page.getByTestId('lead-drawer');
    await drawer.waitFor();
    await waitUntil('the drawer to show Alan', async () => (await drawer.innerText()).includes('Alan Turing'));
    await page.keyboard.press('Escape');
    await drawer.waitFor({ state: 'detached' });

    // The sale-status picker offers the values partners reported; picking one filters exactly.
    await page.getByTestId('more-filters-toggle').click();
    await page.getByRole('textbox', { name: 'Sub ID 1' }).waitFor();
    await page.getByRole('textbox', { name: 'Sale status' }).click();
    await page.getByRole('option', { name: 'No answer' }).waitFor();
    assert.deepEqual(await page.getByRole('option').allInnerTexts(), ['Call back', 'No answer']);
    await page.getByRole('option', { name: 'Call back' }).click();
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/[?&]sale_status=Call(\+|%20)back/);
    await rowCount(1);
    assert.equal(await rows.first().getAttribute('data-lead-id'), first);
    assert.equal(await page.getByTestId('more-filters-toggle').innerText(), 'Fewer filters (1)');
    await page.getByTestId('more-filters-toggle').click();
    assert.equal(
      await page.getByTestId('more-filters-toggle').innerText(),
      'More filters (1)',
      'a folded filter still counts',
    );
    await page.getByRole('button', { name: 'Reset' }).click();
    await rowCount(5);

    // Selection: ticking a box never opens the lead; the bar counts what is selected.
    const tick = (id: string) => page.locator(`[data-lead-id="${id}"]`).getByTestId('lead-select').check();
    await tick(edsger);
    await tick(barbara);
    await tick(first);
    assert.equal(await drawer.count(), 0);
    assert.equal(await page.getByTestId('bulk-count').innerText(), '3 leads selected');
    assert.equal(
      await page.getByTestId('bulk-redeliver').innerText(),
      'Redeliver (2)',
      'only the rejected ones can go again',
    );
    await assertAccessible(page, 'Leads with a selection');
    await screenshotsAtEverySize(page, 'leads-selection');

    // Export selected: confirmed, then exactly those leads in the CSV.
    await page.getByTestId('bulk-export').click();
    await page.getByRole('dialog', { name: 'Export 3 leads' }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByTestId('bulk-export-confirm').click(),
    ]);
    const csv = readFileSync((await download.path())!, 'utf8');
    const exported = csv
      .trim()
      .split('\n')
      .slice(1)
      .map((line) => line.split(',')[0]);
    assert.deepEqual(exported.sort(), [edsger, barbara, first].sort(), csv);

    // Redeliver the two rejected ones to the partner that takes leads; the third is named as left out.
    await page.getByTestId('bulk-redeliver').click();
    const dialog = page.getByRole('dialog', { name: 'Redeliver 2 leads' });
    await dialog.waitFor();
    assert.match(
      await dialog.getByTestId('redeliver-skipped').innerText(),
      /^1 selected lead is neither rejected nor failed/,
    );
    await dialog.getByLabel('One partner (one attempt)').check();
    await dialog.getByRole('textbox', { name: 'Partner' }).click();
    await page.getByRole('option', { name: 'Taker Ltd' }).click();
    await page.getByTestId('redeliver-confirm').click();
    await waitUntil('two results', async () => (await dialog.getByTestId('redeliver-result').count()) === 2);
    assert.deepEqual((await dialog.getByTestId('redeliver-result').allInnerTexts()).sort(), [
      'Barbara Liskov: delivered to Taker Ltd',
      'Edsger Dijkstra: delivered to Taker Ltd',
    ]);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await waitUntil('the table to show the deliveries', async () =>
      (await page.getByTestId('lead-row-status').allTextContents()).every((s) => s === 'delivered'),
    );
    assert.equal(
      await page.getByTestId('bulk-redeliver').isDisabled(),
      true,
      'nothing left to redeliver in the selection',
    );

    // Both actions are in the audit log: the export with the ids it took, one entry per redelivery.
    const exports = (await api.send('GET', '/api/audit-log?action=lead.exported')).json().data;
    assert.equal(exports.length, 1);
    assert.deepEqual([...exports[0].details.filters.id].sort(), [edsger, barbara, first].sort());
    const redeliveries = (await api.send('GET', '/api/audit-log?action=lead.redelivered')).json().data;
    assert.deepEqual(redeliveries.map((e: { target_id: string }) => e.target_id).sort(), [edsger, barbara].sort());

    // Select all, then clear.
    await page.getByTestId('select-all').check();
    assert.equal(await page.getByTestId('bulk-count').innerText(), '5 leads selected');
    await page.getByRole('button', { name: 'Clear selection' }).click();
    await page.getByTestId('bulk-bar').waitFor({ state: 'detached' });

    // At 1024×700 the common filters still leave most of the screen to the table.
    await page.setViewportSize({ width: 1024, height: 700 });
    assert.ok((await formHeight()) <= 0.35 * 700, `filters take ${await formHeight()} px of 700`);
    await screenshotsAtEverySize(page, 'leads-compact');

    // On a phone only Search stays out; the other filters fold behind "Filters", which counts those set.
    await page.goto(`http://127.0.0.1:${server.port}/leads?country=DE&status=delivered`);
    await page.setViewportSize({ width: 390, height: 844 });
    await rowCount(5);
    const toggle = page.getByTestId('more-filters-toggle');
    await waitUntil('the phone layout', async () => (await toggle.innerText()).startsWith('Filters'));
    assert.equal(await toggle.innerText(), 'Filters (2)');
    assert.equal(await page.getByRole('textbox', { name: 'Country' }).isVisible(), false);
    await toggle.click();
    await page.getByRole('textbox', { name: 'Country' }).waitFor();
    assert.equal(await toggle.innerText(), 'Hide filters (2)');
    await assertAccessible(page, 'Leads on a phone, filters open');
    await screenshot(page, 'leads-filters-phone');
  },
);
