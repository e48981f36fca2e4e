// Settings in a real browser: the IP allow-list (refusals shown, then saved), its audit entry in
// the Audit log with the action filter kept in the URL, and the operator's own profile.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiGet, chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient } from './harness.js';

const ACTION = 'settings.ip_allowlist_updated';

test(
  'an operator sets the IP allow-list, finds it in the audit log, and edits their profile',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-name').waitFor();

    // Security: the page tells the operator which address the list must include.
    await page.getByRole('link', { name: 'Security' }).click();
    await page.waitForURL('**/settings/security');
    assert.match(await page.getByTestId('your-ip').innerText(), /127\.0\.0\.1/);
    await page.getByTestId('allowlist-empty').waitFor();
    const entry = page.getByLabel('New entry');
    const save = page.getByRole('button', { name: 'Save allow-list' });

    // A list without our own address: the server refuses it (409) and says why.
    await entry.fill('203.0.113.0/24');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const [lockout] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/settings/security') && r.request().method() === 'PUT'),
      save.click(),
    ]);
    assert.equal(lockout.status(), 409);
    assert.equal(
      await page
        .getByTestId('security-errors')
        .innerText()
        .then((s) => s.trim()),
      (await lockout.json()).detail,
    );

    // A malformed entry: the API's message shows at that entry.
    await entry.fill('not-an-address');
    await entry.press('Enter');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/settings/security') && r.request().method() === 'PUT'),
      save.click(),
    ]);
    assert.equal(refused.status(), 400);
    const apiError = (await refused.json()).errors.find((e: { field: string }) => e.field === 'ip_allowlist[1]');
    assert.ok(apiError);
    const badRow = page.getByTestId('allowlist-row').filter({ hasText: 'not-an-address' });
    assert.match(await badRow.innerText(), new RegExp(escape(apiError.message)));

    // Fixed: the bad entry removed, our own address added; stored normalised.
    await page.getByRole('button', { name: 'Remove not-an-address' }).click();
    await page.getByRole('button', { name: 'Add my address' }).click();
    await save.click();
    await page.getByTestId('security-saved').waitFor();
    assert.deepEqual(await page.getByTestId('allowlist-entry').allInnerTexts(), ['203.0.113.0/24', '127.0.0.1/32']);
    const stored = await apiGet(server, '/api/settings/security', client.token);
    assert.equal(stored.status, 200, stored.text);
    assert.deepEqual(stored.json().ip_allowlist, ['203.0.113.0/24', '127.0.0.1/32']);
    await screenshot(page, 'security');

    // Audit log: the change is the newest event, with before/after in its details.
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.waitForURL('**/audit');
    const first = page.getByTestId('audit-row').first();
    await first.waitFor();
    assert.equal(await first.getByTestId('audit-action').innerText(), ACTION);
    await first.getByRole('button', { name: 'Show' }).click();
    assert.deepEqual(JSON.parse(await page.getByTestId('audit-details').innerText()), {
      before: [],
      after: ['203.0.113.0/24', '127.0.0.1/32'],
    });
    const actions = await page.getByTestId('audit-action').allInnerTexts();
    assert.ok(actions.includes('auth.login'), `unfiltered, sign-ins are listed too: ${actions}`);

    // Filtered by action: only that event, and the filter survives a reload (it lives in the URL).
    const actionFilter = page.getByRole('textbox', { name: 'Action' });
    await actionFilter.fill(ACTION);
    await actionFilter.press('Enter');
    await page.waitForURL(`**/audit?action=${ACTION}`);
    await page.reload();
    await page.getByTestId('audit-row').first().waitFor();
    assert.equal(await actionFilter.inputValue(), ACTION);
    assert.deepEqual(await page.getByTestId('audit-action').allInnerTexts(), [ACTION]);
    await screenshot(page, 'audit-log');

    // Profile: a new name shows in the header, also after a reload.
    await page.getByRole('link', { name: 'Profile' }).click();
    await page.waitForURL('**/profile');
    const name = page.getByLabel('Name');
    await name.fill('Renamed Owner');
    await page.getByRole('button', { name: 'Save profile' }).click();
    await page.getByTestId('profile-saved').waitFor();
    await page.reload();
    await page.getByTestId('operator-name').filter({ hasText: 'Renamed Owner' }).waitFor();
    assert.equal(await name.inputValue(), 'Renamed Owner');

    // A wrong current password: the API's message at that field.
    const current = page.getByLabel('Current password');
    await current.fill('not-my-password');
    await page.getByLabel('New password').fill('a-brand-new-password-1');
    const [wrong] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/profile/password')),
      page.getByRole('button', { name: 'Change password' }).click(),
    ]);
    assert.equal(wrong.status(), 400);
    const message = (await wrong.json()).errors.find((e: { field: string }) => e.field === 'current_password').message;
    await page.getByTestId('password-errors').waitFor();
    assert.equal(await current.getAttribute('aria-invalid'), 'true');
    const describedBy = (await current.getAttribute('aria-describedby')) ?? '';
    const shown = await page.locator(`[id="${describedBy.split(' ').find((d) => d.endsWith('-error'))}"]`).innerText();
    assert.equal(shown.trim(), message);
    assert.equal((await client.send('GET', '/api/auth/whoami')).status, 200, 'the refused change ended no session');
    await screenshot(page, 'profile');
  },
);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
