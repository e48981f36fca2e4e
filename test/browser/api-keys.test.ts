// Settings → API in a real browser: log in, make a key, see its secret once, use it, revoke it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request } from '../processes.js';
import { ADMIN, apiGet, chromiumAvailable, openBrowser, screenshot, signIn, startServer } from './harness.js';

test('an operator makes an API key, sees its secret once, uses it and revokes it', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const server = await startServer(t);
  const { page } = await openBrowser(t);
  const base = `http://127.0.0.1:${server.port}`;

  // Signed out, the dashboard sends us to the login page.
  await page.goto(`${base}/`);
  await page.waitForURL('**/login');
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await screenshot(page, 'login');
  await page.getByRole('button', { name: 'Sign in' }).click();

  await page.getByRole('link', { name: 'API keys' }).click();
  await page.waitForURL('**/settings/api');
  await page.getByTestId('keys-empty').waitFor();
  await screenshot(page, 'api-keys-empty');

  await page.getByRole('button', { name: 'New key' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name').fill('Browser test key');
  await dialog.getByLabel('leads:view', { exact: true }).check();
  // Scopes no key can use (the allow-list needs a signed-in person) are not offered, and said so.
  assert.equal(await dialog.getByLabel('settings:edit', { exact: true }).count(), 0);
  assert.equal(await dialog.getByLabel('leads:contacts', { exact: true }).count(), 1);
  assert.match(await dialog.getByText(/not offered, since only a signed-in person/).innerText(), /settings:edit/);
  await screenshot(page, 'api-key-new');
  await dialog.getByRole('button', { name: 'Create key' }).click();

  const secret = (await page.getByTestId('key-secret').innerText()).trim();
  assert.match(secret, /^lg_[0-9A-Za-z]{50}$/);
  await screenshot(page, 'api-key-secret');
  await page.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.ok(!(await page.content()).includes(secret), 'the secret is gone once the dialog is closed');
  await page.reload();
  await page.getByTestId('key-row').waitFor();
  assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again after a reload');

  // The secret works against the API.
  const whoami = await apiGet(server, '/api/auth/whoami', secret);
  assert.equal(whoami.status, 200, whoami.text);
  assert.equal(whoami.json().operator.email, ADMIN.email);
  assert.equal(whoami.json().via, 'api_key');

  const row = page.getByTestId('key-row').filter({ hasText: 'Browser test key' });
  await row.getByRole('button', { name: 'Revoke' }).click();
  await screenshot(page, 'api-key-revoke');
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  // Revoked keys are hidden by default; the switch says how many and shows them.
  await row.waitFor({ state: 'detached' });
  await page.getByTestId('keys-empty').filter({ hasText: 'Every key here is revoked.' }).waitFor();
  // (Mantine hides the switch's input under its track: the label is what a person clicks.)
  await page.getByText('Show revoked keys (1)').click();
  await row.getByTestId('key-status').filter({ hasText: 'revoked' }).waitFor();
  assert.equal(await row.getByRole('button', { name: 'Revoke' }).count(), 0, 'a revoked key offers no Revoke button');
  await screenshot(page, 'api-keys-revoked');
  // The choice is remembered in this browser.
  await page.reload();
  await row.getByTestId('key-status').filter({ hasText: 'revoked' }).waitFor();
  assert.equal(await page.getByRole('switch', { name: 'Show revoked keys (1)' }).isChecked(), true);
  await page.getByText('Show revoked keys (1)').click();
  await row.waitFor({ state: 'detached' });

  const refused = await apiGet(server, '/api/auth/whoami', secret);
  assert.equal(refused.status, 401, refused.text);
});

test(
  "an admin sees every operator's keys with their owner and revokes one; others see only their own",
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const server = await startServer(t);
    const post = async (urlPath: string, body: unknown, token?: string) => {
      const r = await request(server.port, 'POST', urlPath, body, token ? { authorization: `Bearer ${token}` } : {});
      assert.ok(r.status < 300, `${urlPath}: ${r.status} ${r.text}`);
      return r.json();
    };
    const owner = (await post('/api/auth/login', { email: ADMIN.email, password: ADMIN.password })).token as string;
    const role = await post('/api/roles', { name: 'Lead readers', permissions: ['leads:view'] }, owner);
    const other = { email: 'kim@example.com', password: 'kim-password-123' };
    await post('/api/operators', { ...other, name: 'Kim', role_id: role.id, current_password: ADMIN.password }, owner);
    const kim = (await post('/api/auth/login', other)).token as string;
    const kimKey = await post('/api/api-keys', { name: "Kim's CRM sync", scopes: ['leads:view'] }, kim);

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByTestId('keys-empty').waitFor(); // the admin's own keys: none
    await page.getByText("Every operator's keys").click();
    const row = page.getByTestId('key-row').filter({ hasText: "Kim's CRM sync" });
    await row.getByTestId('key-owner').filter({ hasText: 'kim@example.com' }).waitFor();
    await screenshot(page, 'api-keys-everyone');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await row.waitFor({ state: 'detached' }); // revoked: hidden until "Show revoked keys"
    await page.getByText('Show revoked keys (1)').click();
    await row.getByTestId('key-status').filter({ hasText: 'revoked' }).waitFor();
    assert.equal((await apiGet(server, '/api/auth/whoami', kimKey.secret)).status, 401, "Kim's key stopped working");

    // Kim is no admin: only her own keys, and no switch to look at everyone's.
    const kimBrowser = await openBrowser(t);
    await kimBrowser.page.goto(`http://127.0.0.1:${server.port}/login`);
    await kimBrowser.page.getByLabel('Email').fill(other.email);
    await kimBrowser.page.getByLabel('Password').fill(other.password);
    await kimBrowser.page.getByRole('button', { name: 'Sign in' }).click();
    await kimBrowser.page.getByRole('link', { name: 'API keys' }).click();
    // Her one key was revoked by the admin: hidden, counted by the switch, shown by it.
    await kimBrowser.page.getByText('Show revoked keys (1)').click();
    await kimBrowser.page.getByTestId('key-row').filter({ hasText: "Kim's CRM sync" }).waitFor();
    await kimBrowser.page.getByTestId('operator-email').waitFor(); // whoami has answered
    assert.equal(await kimBrowser.page.getByText("Every operator's keys").count(), 0);
  },
);
