// First run in a real browser: with no operator yet, the dashboard opens on setup, makes the
// owner, and signs them in; afterwards setup is closed and the sign-in page is shown instead.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { request, spawnServer, waitUntilUp } from '../processes.js';
import { chromiumAvailable, ensureDashboardBuilt, openBrowser, screenshot } from './harness.js';

test('first-run setup makes the owner and signs them in; then setup is closed', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  ensureDashboardBuilt();
  // No LEADGATE_ADMIN_* variables: the server starts without any operator.
  const server = await spawnServer(t, { LOG_LEVEL: 'warn', DELIVERY_RECOVERY_INTERVAL_MS: '0' });
  await waitUntilUp(server);
  const base = `http://127.0.0.1:${server.port}`;

  const { page } = await openBrowser(t);
  await page.goto(`${base}/leads`);
  await page.waitForURL('**/setup');
  await page.getByLabel('Name').fill('Olga Owner');
  await page.getByLabel('Email').fill('olga@example.com');
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create owner' }).click();
  // The API's own message for a password that is too short.
  await page.getByText('password: must be at least 10 characters long').waitFor();
  assert.equal((await request(server.port, 'GET', '/api/setup')).json().needed, true, 'nothing was made');
  await screenshot(page, 'setup');

  await page.getByLabel('Password').fill('olga-password-123');
  await page.getByRole('button', { name: 'Create owner' }).click();
  await page.getByTestId('operator-email').filter({ hasText: 'olga@example.com' }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/');
  assert.equal((await request(server.port, 'GET', '/api/setup')).json().needed, false);

  // Setup is a one-time door: a fresh browser going there lands on sign-in.
  const other = await openBrowser(t);
  await other.page.goto(`${base}/setup`);
  await other.page.waitForURL('**/login');
  await other.page.getByRole('button', { name: 'Sign in' }).waitFor();
});
