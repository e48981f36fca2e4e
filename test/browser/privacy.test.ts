// Settings → Privacy in a real browser: an admin erases a contact through the confirmation and
// sees the receipt and its row in the list (the subject masked, never the email typed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerClient, spawnServer, waitUntilUp } from '../processes.js';
import { ADMIN, apiGet, chromiumAvailable, ensureDashboardBuilt, openBrowser, signIn } from './harness.js';

test('an admin erases a contact from the Privacy screen and sees the receipt', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  ensureDashboardBuilt();
  const server = await spawnServer(t, {
    LEADGATE_ADMIN_EMAIL: ADMIN.email,
    LEADGATE_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    DELIVERY_RECOVERY_INTERVAL_MS: '0',
  });
  await waitUntilUp(server);
  const client = await new ServerClient(server.port).login();
  t.after(() => client.close());

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
