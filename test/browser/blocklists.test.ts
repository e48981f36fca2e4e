// Blocklists in a real browser: an operator adds an email and an IP block through the form (the
// API's 400 for a block with host bits set, and its 409 for a value already listed, shown in the
// form), bulk-adds a CSV (its bad row named, then the counts), filters, edits, deletes; a lead
// matching an entry is answered rejected by intake. A role without leads:contacts sees emails
// masked and no edit controls; a role limited to one provider adds for it only. No screen causes
// a 403; axe-core clean, and the screen fits a phone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import type { ServerClient } from '../processes.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  signInWithRole,
  startServerAndClient,
  waitUntil,
  wideElements,
} from './harness.js';

const QUALITY = 'the lead did not pass the quality checks';
let serial = 0;

/** A partner that takes leads, a flow to it, a provider with a campaign through the flow. */
async function world(t: Parameters<typeof startPartner>[0], api: ServerClient) {
  const taker = await startPartner(t, accepting());
  const partner = await api.create('/api/partners', { name: 'Taker Ltd', integration: defaultIntegration(taker.url) });
  const flow = await api.create('/api/flows', { name: 'Main', targets: [{ partner_id: partner.id, priority: 1 }] });
  const provider = await api.create('/api/traffic-providers', { name: 'Affiliate One' });
  const campaign = await api.create('/api/campaigns', {
    name: 'Spring',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 1 },
  });
  return { provider, campaign };
}

/** A lead posted to intake by the provider, answered as intake answers it. */
async function postLead(api: ServerClient, w: Awaited<ReturnType<typeof world>>, over: Record<string, unknown>) {
  const k = ++serial;
  const res = await api.send(
    'POST',
    '/api/intake/leads',
    {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: `ada.${k}@example.com`,
      phone: `+4915112${String(345600 + k)}`,
      country: 'DE',
      ip: '203.0.113.7',
      campaign_id: w.campaign.id,
      ...over,
    },
    w.provider.token,
  );
  assert.equal(res.status, 201, res.text);
  return res.json() as { status: string; reason?: string };
}

const rows = (page: Page) => page.getByTestId('blocklist-row');
const row = (page: Page, value: string) =>
  rows(page).filter({ has: page.getByTestId('blocklist-value').getByText(value, { exact: true }) });
const values = async (page: Page) => (await page.getByTestId('blocklist-value').allInnerTexts()).map((v) => v.trim());

/** Picks an option of a Mantine Select by its label. */
async function choose(page: Page, scope: ReturnType<Page['getByRole']>, label: string, option: string) {
  await scope.getByRole('textbox', { name: label, exact: true }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

test(
  'an operator adds, bulk-adds, edits and deletes blocklist entries, and intake rejects a lead they match',
  { timeout: 180_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const w = await world(t, api);
    const { page } = await openBrowser(t);
    const refused: string[] = [];
    page.on('response', (r) => r.status() === 403 && refused.push(new URL(r.url()).pathname));
    await signIn(page, server);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Blocklists' }).click();
    await page.getByRole('heading', { name: 'Blocklists', level: 1 }).waitFor();
    await page.getByTestId('blocklist-empty').waitFor();
    assert.equal(await page.title(), 'Blocklists · Leadgate');

    // An email, global, through the form; the value is stored as matched (lower case).
    await page.getByRole('button', { name: 'Add entry' }).click();
    let dialog = page.getByRole('dialog', { name: 'Add blocklist entry' });
    await dialog.getByRole('textbox', { name: 'Value' }).fill('Spam.Er@Example.com');
    await dialog.getByRole('textbox', { name: 'Note (optional)' }).fill('chargeback fraud');
    await dialog.getByRole('button', { name: 'Add entry' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row(page, 'spam.er@example.com').waitFor();
    assert.match(await page.getByTestId('blocklist-added').innerText(), /spam\.er@example\.com \(global\)/);
    const cells = await row(page, 'spam.er@example.com').locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(1, 5), ['Email', 'Global', 'Never', 'chargeback fraud']);
    assert.match(cells[5], /^Owner\n/, 'added by the owner, and when');

    // The same again: the API's 409 is shown in the form.
    await page.getByRole('button', { name: 'Add entry' }).click();
    dialog = page.getByRole('dialog', { name: 'Add blocklist entry' });
    await dialog.getByRole('textbox', { name: 'Value' }).fill('spam.er@example.com');
    await dialog.getByRole('button', { name: 'Add entry' }).click();
    assert.match(
      await dialog.getByTestId('entry-form-error').innerText(),
      /spam\.er@example\.com is already listed globally/,
    );

    // An IP block with host bits set: the 400 names the block at the Value input.
    await choose(page, dialog, 'Kind', 'IP address or block');
    await dialog.getByRole('textbox', { name: 'Value' }).fill('10.1.2.3/8');
    await dialog.getByRole('button', { name: 'Add entry' }).click();
    const valueInput = dialog.getByRole('textbox', { name: 'Value' });
    await dialog.getByText(/the block is 10\.0\.0\.0\/8/).waitFor();
    assert.equal(await valueInput.getAttribute('aria-invalid'), 'true');
    assert.equal(
      await dialog.getByTestId('entry-form-error').innerText(),
      'Not saved: please correct the fields marked above.',
    );
    await assertAccessible(page, 'blocklist entry form with an error');
    await screenshot(page, 'blocklist-entry-error');
    await valueInput.fill('10.0.0.0/8');
    await choose(page, dialog, 'Traffic provider', 'Affiliate One');
    await dialog.getByRole('button', { name: 'Add entry' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row(page, '10.0.0.0/8').waitFor();
    assert.deepEqual((await row(page, '10.0.0.0/8').locator('td').allInnerTexts()).slice(1, 3), [
      'IP address or block',
      'Affiliate One',
    ]);

    // Bulk add: a bad row is named and nothing is added; then a good file's counts.
    await page.getByRole('button', { name: 'Bulk add (CSV)' }).click();
    dialog = page.getByRole('dialog', { name: 'Bulk add (CSV)' });
    await choose(page, dialog, 'Kind of rows without one', 'IP address or block');
    const upload = (csv: string) =>
      dialog
        .locator('input[type="file"]')
        .setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    await upload('value\n192.0.2.1\n10.1.2.3/8\n');
    await dialog.getByRole('button', { name: 'Add entries' }).click();
    const errors = dialog.getByTestId('bulk-errors');
    await errors.waitFor();
    assert.match(await errors.innerText(), /Nothing was added/);
    assert.match(await errors.innerText(), /Row 2, value: .*the block is 10\.0\.0\.0\/8/);
    await assertAccessible(page, 'bulk add with row errors');
    await upload(
      [
        'kind,value,note',
        'sub_id,bad-source,from the list',
        'email_domain,junk.test,',
        ',198.51.100.0/24,kind from the choice',
        'email,SPAM.ER@example.com,already there',
      ].join('\r\n'),
    );
    await dialog.getByRole('button', { name: 'Add entries' }).click();
    await dialog.getByTestId('bulk-result').waitFor();
    assert.equal(await dialog.getByTestId('bulk-result').innerText(), '4 rows read: 3 added, 1 already listed.');
    await screenshot(page, 'blocklist-bulk-result');
    await dialog.getByRole('button', { name: 'Close', exact: true }).last().click();
    await waitUntil('five entries listed', async () => (await rows(page).count()) === 5);

    // Filters: a kind; a value in another spelling; the global ones.
    const filters = page.getByRole('search', { name: 'Blocklist filters' });
    await choose(page, filters, 'Kind', 'Sub ID');
    await waitUntil('the sub id alone', async () => (await values(page)).join() === 'bad-source');
    await filters.getByRole('button', { name: 'Clear filters' }).click();
    await filters.getByRole('textbox', { name: 'Value' }).fill('JUNK.test');
    await filters.getByRole('textbox', { name: 'Value' }).press('Enter');
    await waitUntil('the domain by its value', async () => (await values(page)).join() === 'junk.test');
    await filters.getByRole('button', { name: 'Clear filters' }).click();
    await choose(page, filters, 'Scope', 'Affiliate One');
    await waitUntil('the provider’s entry', async () => (await values(page)).join() === '10.0.0.0/8');
    await filters.getByRole('button', { name: 'Clear filters' }).click();
    await waitUntil('five entries again', async () => (await rows(page).count()) === 5);

    // Edit the block's note and expiry.
    await row(page, '10.0.0.0/8').getByRole('button', { name: 'Edit' }).click();
    dialog = page.getByRole('dialog', { name: /^Edit/ });
    await dialog.getByRole('textbox', { name: 'Note (optional)' }).fill('office range');
    await dialog.getByLabel('Expires on (optional)').fill('2099-12-31');
    await assertAccessible(page, 'blocklist edit dialog');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    await row(page, '10.0.0.0/8').getByText('office range').waitFor();
    const listed = (await api.send('GET', '/api/blocklists?kind=ip')).json().data as Record<string, unknown>[];
    const block = listed.find((e) => e.value === '10.0.0.0/8')!;
    assert.equal(block.note, 'office range');
    assert.match(String(block.expires_at), /^2099-12-31T23:59:59/, 'the end of the day in the operator’s zone (UTC)');

    // Delete, with a confirmation.
    await row(page, 'bad-source').getByRole('button', { name: 'Delete' }).click();
    dialog = page.getByRole('dialog', { name: /^Delete “bad-source”/ });
    await assertAccessible(page, 'blocklist delete confirmation');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await waitUntil('the entry gone', async () => (await row(page, 'bad-source').count()) === 0);
    assert.equal((await api.send('GET', '/api/blocklists')).json().data.length, 4);

    // Intake: a lead an entry matches is rejected (the provider told only that), the others pass.
    const byEmail = await postLead(api, w, { email: 'Spam.Er@example.com' });
    assert.deepEqual([byEmail.status, byEmail.reason], ['rejected', QUALITY]);
    assert.equal((await postLead(api, w, { ip: '10.200.3.4' })).status, 'rejected', 'the provider’s IP block');
    assert.equal((await postLead(api, w, { email: 'x@mail.junk.test' })).status, 'rejected', 'a subdomain');
    assert.notEqual((await postLead(api, w, { sub_id1: 'bad-source' })).status, 'rejected', 'deleted');
    assert.notEqual((await postLead(api, w, {})).status, 'rejected');

    // An expired entry is listed only with "Show expired", and marked.
    await api.create('/api/blocklists', {
      kind: 'sub_id',
      value: 'old-source',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    await new Promise((r) => setTimeout(r, 1600));
    await page.reload();
    await rows(page).first().waitFor();
    assert.equal(await row(page, 'old-source').count(), 0);
    await page.getByText('Show expired').click();
    await row(page, 'old-source').getByTestId('blocklist-expired').waitFor();
    assert.equal(await page.getByTestId('blocklist-expired').count(), 1);
    await page.getByTestId('zone-note').waitFor();
    await assertAccessible(page, 'blocklists');
    await screenshot(page, 'blocklists');

    await page.setViewportSize({ width: 390, height: 844 });
    const { scrollWidth, lines } = await wideElements(page);
    assert.ok(scrollWidth <= 390, `wider than the phone:\n${lines.join('\n')}`);
    await assertAccessible(page, 'blocklists-phone');
    await screenshot(page, 'blocklists-phone');
    assert.deepEqual(refused, [], 'no 403');
  },
);

test(
  'without leads:contacts emails are masked and nothing can be changed; a role limited to a provider adds for it',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const w = await world(t, api);
    await api.create('/api/blocklists', { kind: 'email', value: 'spam.er@example.com' });
    await api.create('/api/blocklists', { kind: 'ip', value: '10.0.0.0/8', traffic_provider_id: w.provider.id });
    const { page } = await openBrowser(t);
    const refused: string[] = [];
    page.on('response', (r) => r.status() === 403 && refused.push(new URL(r.url()).pathname));
    await page.goto(`http://127.0.0.1:${server.port}/login`);

    // quality:view alone: masked, no buttons, no scope filter (the providers list is not its to read).
    await signInWithRole(page, server, api, { name: 'Quality viewer', permissions: ['quality:view'] });
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Blocklists' }).click();
    await row(page, '10.0.0.0/8').waitFor();
    assert.deepEqual((await values(page)).sort(), ['10.0.0.0/8', 's***@example.com']);
    assert.equal(await page.getByRole('button', { name: 'Add entry' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Bulk add (CSV)' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Delete' }).count(), 0);
    assert.equal(await page.getByRole('columnheader', { name: 'Actions' }).count(), 0);
    assert.equal(await page.getByRole('textbox', { name: 'Scope' }).count(), 0);
    await page.getByText(/shown masked/).waitFor();
    await page.waitForLoadState('networkidle');
    await assertAccessible(page, 'blocklists read only');
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.waitForURL('**/login');

    // Limited to Affiliate One: its entry only, and new ones for it (no "Global" to pick).
    await signInWithRole(page, server, api, {
      name: 'Scoped quality',
      permissions: ['quality:view', 'quality:edit'],
      scope: { traffic_provider_ids: [w.provider.id], partner_ids: null },
    });
    await page.goto(`http://127.0.0.1:${server.port}/quality/blocklists`);
    await row(page, '10.0.0.0/8').waitFor();
    assert.deepEqual(await values(page), ['10.0.0.0/8']);
    await page.getByRole('button', { name: 'Add entry' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add blocklist entry' });
    assert.equal(await dialog.getByRole('textbox', { name: 'Traffic provider' }).inputValue(), 'Affiliate One');
    await dialog.getByRole('textbox', { name: 'Traffic provider' }).click();
    assert.deepEqual(await page.getByRole('option').allInnerTexts(), ['Affiliate One'], 'no Global');
    await page.getByRole('option', { name: 'Affiliate One' }).click();
    await choose(page, dialog, 'Kind', 'Sub ID');
    await dialog.getByRole('textbox', { name: 'Value' }).fill('scoped-src');
    await dialog.getByRole('button', { name: 'Add entry' }).click();
    await row(page, 'scoped-src').waitFor();
    assert.equal((await row(page, 'scoped-src').locator('td').allInnerTexts())[2], 'Affiliate One');
    await page.waitForLoadState('networkidle');
    assert.deepEqual(refused, [], 'no 403');
  },
);
