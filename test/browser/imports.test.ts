// CSV import in a real browser: a file uploaded (its progress), its columns mapped from the
// suggestion, a dry run whose bad row is shown at its row number, the import done; axe-core clean,
// and the screen fits a phone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
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

const CSV = [
  'First Name,Last Name,Email,Phone,Country,IP',
  'Ada,Lovelace,ada@example.com,+49 151 23456701,DE,203.0.113.1',
  'Alan,Turing,alan@example.com,+49 151 23456702,DE,203.0.113.2',
  'Bad,Phone,bad@example.com,12345,DE,203.0.113.3',
  'Grace,Hopper,grace@example.com,+49 151 23456704,DE,203.0.113.4',
].join('\r\n');

test(
  'an operator imports a CSV: mapping suggested, the bad row shown at its row, the good rows stored',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t, { IMPORT_INTERVAL_MS: '300' });
    const provider = await api.create('/api/traffic-providers', { name: 'List Seller' });
    await api.create('/api/campaigns', {
      name: 'Bought list',
      traffic_provider_id: provider.id,
      payout: { model: 'cpl', amount: 1 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/leads/imports`);
    await page.getByRole('heading', { name: 'Import leads' }).waitFor();
    await page.locator('input[type="file"]').setInputFiles({
      name: 'bought.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(CSV),
    });
    const panel = page.getByTestId('import-panel');
    await panel.waitFor();
    assert.equal(
      await panel.getByRole('textbox', { name: 'Email' }).inputValue(),
      'Email',
      'suggested from the header',
    );
    assert.equal(await panel.getByRole('textbox', { name: 'IP address' }).inputValue(), 'IP');
    await panel.getByRole('textbox', { name: 'Traffic provider' }).click();
    await page.getByRole('option', { name: 'List Seller' }).click();
    await panel.getByRole('textbox', { name: 'Campaign' }).click();
    await page.getByRole('option', { name: 'Bought list' }).click();
    await panel.getByRole('button', { name: 'Dry run' }).click();

    const state = async () => (await panel.getByTestId('import-state').textContent())?.trim();
    await waitUntil('the dry run done', async () => (await state()) === 'validated');
    const bad = panel.getByTestId('import-error-row');
    await bad.first().waitFor();
    assert.equal(await bad.count(), 1);
    const cells = await bad.first().locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(0, 2), ['3', 'Phone']);
    assert.match(cells[2], /phone number/);
    await screenshot(page, 'imports');
    await assertAccessible(page, 'imports');

    await panel.getByRole('button', { name: 'Import', exact: true }).click();
    await waitUntil('the import done', async () => (await state()) === 'done');
    assert.match(await panel.getByTestId('import-progress').innerText(), /3 imported/);
    const [imp] = (await api.send('GET', '/api/imports')).json().data;
    assert.deepEqual([imp.state, imp.counts.imported, imp.counts.bad], ['done', 3, 1]);

    await page.setViewportSize({ width: 390, height: 844 });
    const { scrollWidth, lines } = await wideElements(page);
    assert.ok(scrollWidth <= 390, `wider than the phone:\n${lines.join('\n')}`);
    await assertAccessible(page, 'imports-phone');
  },
);

test(
  'an operator imports a CSV and sends it: the import ends in one re-injection job through the chosen flow',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t, { IMPORT_INTERVAL_MS: '300' });
    const taker = await startPartner(t, accepting());
    const partner = await api.create('/api/partners', {
      name: 'Taker Ltd',
      integration: defaultIntegration(taker.url),
    });
    await api.create('/api/flows', { name: 'Resale', targets: [{ partner_id: partner.id, priority: 1 }] });
    const provider = await api.create('/api/traffic-providers', { name: 'List Seller' });
    await api.create('/api/campaigns', {
      name: 'Bought list',
      traffic_provider_id: provider.id,
      payout: { model: 'cpl', amount: 1 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Overview' }).waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/leads/imports`);
    await page.getByRole('heading', { name: 'Import leads' }).waitFor();
    await page.locator('input[type="file"]').setInputFiles({
      name: 'bought.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(CSV),
    });
    const panel = page.getByTestId('import-panel');
    await panel.waitFor();
    await panel.getByRole('textbox', { name: 'Traffic provider' }).click();
    await page.getByRole('option', { name: 'List Seller' }).click();
    await panel.getByRole('textbox', { name: 'Campaign' }).click();
    await page.getByRole('option', { name: 'Bought list' }).click();
    await panel.getByText('Store and send', { exact: true }).click();
    await panel.getByRole('textbox', { name: 'Send through flow' }).click();
    await page.getByRole('option', { name: 'Resale' }).click();
    await panel.getByRole('textbox', { name: 'Leads per minute' }).fill('30');
    await assertAccessible(page, 'imports-route');
    await panel.getByRole('button', { name: 'Import', exact: true }).click();

    const state = async () => (await panel.getByTestId('import-state').textContent())?.trim();
    await waitUntil('the import done', async () => (await state()) === 'done');
    await panel.getByTestId('import-injection').waitFor();
    const [imp] = (await api.send('GET', '/api/imports')).json().data;
    assert.deepEqual([imp.state, imp.mode, imp.counts.imported], ['done', 'route', 3]);
    assert.ok(imp.injection_id, 'the job that sends the imported leads');
    const job = (await api.send('GET', `/api/injections/${imp.injection_id}`)).json();
    assert.deepEqual([job.per_minute, job.flow_id], [30, (await api.send('GET', '/api/flows')).json().data[0].id]);
  },
);
