// Settings → API in a real browser: log in, make a key, see its secret once, use it, revoke it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ADMIN, apiGet, chromiumAvailable, openBrowser, screenshot, startServer } from './harness.js';

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
  await row.getByTestId('key-status').filter({ hasText: 'revoked' }).waitFor();
  await page.getByRole('dialog').waitFor({ state: 'detached' });
  assert.equal(await row.getByRole('button', { name: 'Revoke' }).count(), 0, 'a revoked key offers no Revoke button');
  await screenshot(page, 'api-keys-revoked');

  const refused = await apiGet(server, '/api/auth/whoami', secret);
  assert.equal(refused.status, 401, refused.text);
});
