// A role limited to some traffic providers (issue 27 item 5), set in a real browser: the role
// editor's scope pickers store the scope (checked through the API), show it again, pass on the
// API's refusal of an account-wide permission in a scoped role, are axe-clean and fit a phone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ADMIN,
  apiGet,
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
} from './harness.js';

test('an admin limits a role to one traffic provider on the role editor', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);
  const alpha = await client.create('/api/traffic-providers', { name: 'Alpha Traffic' });
  await client.create('/api/traffic-providers', { name: 'Beta Traffic' });

  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByTestId('operator-email').waitFor();
  await page.goto(`http://127.0.0.1:${server.port}/settings/roles/new`);
  await page.getByLabel('Name').fill('Alpha manager');
  await page.getByRole('checkbox', { name: 'Leads: view' }).check();
  await page.getByRole('checkbox', { name: 'Traffic providers: view' }).check();
  // Open by default; unticking "every" offers the list.
  assert.equal(await page.getByRole('checkbox', { name: 'Every traffic provider' }).isChecked(), true);
  await page.getByText('Every traffic provider', { exact: true }).click();
  await page.getByRole('textbox', { name: 'Only these traffic providers' }).click();
  await page.getByRole('option', { name: 'Alpha Traffic' }).click();
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('role-saved').waitFor();
  const roleId = new URL(page.url()).pathname.split('/').pop()!;
  const stored = await apiGet(server, `/api/roles/${roleId}`, client.token);
  assert.equal(stored.status, 200, stored.text);
  assert.deepEqual(stored.json().scope, { traffic_provider_ids: [alpha.id], partner_ids: null });

  // Shown again as stored.
  await page.reload();
  await page.getByLabel('Name').waitFor();
  assert.equal(await page.getByRole('checkbox', { name: 'Every traffic provider' }).isChecked(), false);
  assert.equal(await page.getByRole('checkbox', { name: 'Every partner' }).isChecked(), true);
  await page.getByText('Alpha Traffic').first().waitFor();
  assert.deepEqual(
    await page.locator('.mantine-Pill-label').allInnerTexts(),
    ['Alpha Traffic'],
    'the chosen provider alone',
  );
  await assertAccessible(page, 'role editor with a scope');
  await screenshot(page, 'role-editor-scope');

  // The audit log reads the whole account: the API refuses it in a scoped role, and says so here.
  await page.getByRole('checkbox', { name: 'Audit log: view' }).check();
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/api/roles/${roleId}`) && r.request().method() === 'PATCH'),
    page.getByRole('button', { name: 'Save' }).click(),
  ]);
  assert.equal(refused.status(), 400);
  const { errors } = await refused.json();
  assert.equal(errors[0].field, 'permissions');
  await page.getByText(errors[0].message).first().waitFor();
  const after = await apiGet(server, `/api/roles/${roleId}`, client.token);
  assert.deepEqual(after.json().permissions.sort(), ['leads:view', 'traffic_providers:view']);

  // On a phone the pickers fit the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await page.getByRole('checkbox', { name: 'Every traffic provider' }).waitFor();
  const wide = await page.evaluate('document.documentElement.scrollWidth');
  assert.ok(Number(wide) <= 390, `the page is ${wide} px wide`);
  await assertAccessible(page, 'role editor with a scope, phone');
  await screenshot(page, 'role-editor-scope-phone');

  // An operator of that role is told, on every screen, whose data it sees.
  const email = 'alpha-manager@example.test';
  const password = 'alpha-manager-password-1';
  await client.create('/api/operators', {
    email,
    name: 'Alpha Manager',
    password,
    role_id: roleId,
    current_password: ADMIN.password,
  });
  const other = await openBrowser(t);
  await other.page.goto(`http://127.0.0.1:${server.port}/login`);
  await other.page.getByLabel('Email').fill(email);
  await other.page.getByLabel('Password').fill(password);
  await other.page.getByRole('button', { name: 'Sign in' }).click();
  const notice = other.page.getByTestId('scope-notice');
  await notice.waitFor();
  assert.equal(
    await notice.innerText(),
    'Your role shows the leads, reports and figures of traffic providers Alpha Traffic only.',
  );
  await other.page.goto(`http://127.0.0.1:${server.port}/leads`);
  await notice.waitFor();
  await assertAccessible(other.page, 'scoped operator with its notice');
});
