// Settings → Privacy in a real browser: an admin erases a contact through the confirmation and
// sees the receipt and its row in the list (the subject masked, never the email typed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiGet, chromiumAvailable, openBrowser, signIn, startServerAndClient } from './harness.js';

test('an admin erases a contact from the Privacy screen and sees the receipt', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);

  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByRole('link', { name: 'Privacy' }).click();
  await page.waitForURL('**/settings/privacy');
  await page.getByText('No erasures yet.').waitFor();
  await page.getByLabel('Email').fill('Someone.Gone@Example.com');
  await page.getByTestId('erase-submit').click();
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/privacy/erasures') && r.request().method() === 'POST'),
    page.getByRole('dialog').getByRole('button', { name: 'Erase' }).click(),
  ]);
  assert.equal(answer.status(), 201);
  assert.match(await page.getByTestId('erase-receipt').innerText(), /Erased 0 lead\(s\) of s\*\*\*@example\.com/);
  const table = page.getByTestId('erasures-table');
  await table.waitFor();
  assert.match(await table.innerText(), /s\*\*\*@example\.com/);
  assert.doesNotMatch(await page.locator('body').innerText(), /someone\.gone/i);
  const list = (await apiGet(server, '/api/privacy/erasures', client.token)).json();
  assert.equal(list.data.length, 1);
});

test(
  'an admin sets contacts to be purged after 30 days, behind a confirmation; 0 days is refused inline',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);

    const { page } = await openBrowser(t);
    const puts: unknown[] = [];
    page.on('request', (r) => {
      if (r.url().endsWith('/api/privacy/retention') && r.method() === 'PUT') puts.push(r.postDataJSON());
    });
    await signIn(page, server);
    await page.getByRole('link', { name: 'Privacy' }).click();
    await page.waitForURL('**/settings/privacy');
    await page.getByText(/^No run yet: the job applies the settings every \d+ minutes\.$/).waitFor();

    const purge = page.getByRole('switch', { name: 'Purge contacts after' });
    const days = page.getByRole('textbox', { name: 'Purge contacts after (days)' });
    assert.equal(await purge.isChecked(), false);
    assert.equal(await days.isDisabled(), true, 'off: kept for ever');
    await purge.dispatchEvent('click');
    assert.equal(await purge.isChecked(), true);

    // 0 days: said at the input, and nothing is sent.
    await days.fill('0');
    await page.getByText('Enter whole days from 1 to 3650.').waitFor();
    assert.equal(await days.getAttribute('aria-invalid'), 'true');
    await page.getByTestId('retention-save').click();
    assert.equal(await page.getByRole('dialog').count(), 0);
    assert.deepEqual(puts, []);

    // 30 days: the confirmation says what the next run does, then the setting is stored.
    await days.fill('30');
    assert.equal(await page.getByText('Enter whole days from 1 to 3650.').count(), 0);
    await page.getByTestId('retention-save').click();
    const dialog = page.getByRole('dialog', { name: 'Apply the new retention?' });
    await dialog.waitFor();
    assert.match(
      await dialog.innerText(),
      /purge the names, email, phone and IP of every lead received before .+ \(30 days ago\)/,
    );
    assert.match(await dialog.innerText(), /This cannot be undone\./);
    assert.doesNotMatch(await dialog.innerText(), /delete every lead/);
    const [answer] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/privacy/retention') && r.request().method() === 'PUT'),
      dialog.getByRole('button', { name: 'Save and apply' }).click(),
    ]);
    assert.equal(answer.status(), 200);
    await page.getByText('Saved.').waitFor();
    await dialog.waitFor({ state: 'hidden' });
    assert.deepEqual(puts, [{ contacts_days: 30, leads_days: null }]);
    const stored = (await apiGet(server, '/api/privacy/retention', client.token)).json();
    assert.equal(stored.contacts_days, 30);
    assert.equal(stored.leads_days, null);

    // Lengthening a limit removes nothing more: saved without a confirmation.
    await days.fill('60');
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/privacy/retention') && r.request().method() === 'PUT'),
      page.getByTestId('retention-save').click(),
    ]);
    assert.equal(await page.getByRole('dialog').count(), 0);
    await page.getByText('Saved.').waitFor();
    assert.equal((await apiGet(server, '/api/privacy/retention', client.token)).json().contacts_days, 60);
  },
);
