// Roles and operators in a real browser: an admin builds a role on the permission grid (checked
// through the API), gives it to a new operator, meets the API's refusals (a duplicate email, a role
// still held), and the new operator, signed in elsewhere, sees only what the role grants.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { totpAt } from '../../src/server/auth/totp.js';
import { ADMIN, apiGet, chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient } from './harness.js';

const WATCHER = { name: 'Wanda Watcher', email: 'wanda@example.test', password: 'wanda-password-1' };

test(
  'an admin makes a role and an operator; the operator sees only what the role grants',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);

    const { page } = await openBrowser(t);
    await signIn(page, server);

    // The role, ticked on the grid: a whole row (Flows), one box unticked again, one single box.
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.waitForURL('**/settings/roles');
    await page.getByTestId('role-row').filter({ hasText: 'admin' }).waitFor();
    await page.getByRole('button', { name: 'New role' }).click();
    await page.waitForURL('**/settings/roles/new');
    await page.getByLabel('Name').fill('Lead watcher');
    await page.getByLabel('Description').fill('Reads leads and flows');
    await page.getByRole('checkbox', { name: 'Flows: every action' }).check();
    assert.equal(
      await page.getByRole('checkbox', { name: 'Flows: edit' }).isChecked(),
      true,
      'the row box ticks the whole row',
    );
    await page.getByRole('checkbox', { name: 'Flows: edit' }).uncheck();
    await page.getByRole('checkbox', { name: 'Leads: view' }).check();
    // Half a row ticked: the row's box says so.
    assert.equal(
      await page
        .getByRole('checkbox', { name: 'Flows: every action' })
        .evaluate((el) => (el as { indeterminate: boolean }).indeterminate),
      true,
    );
    await screenshot(page, 'role-editor');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('role-saved').waitFor();
    const roleId = new URL(page.url()).pathname.split('/').pop()!;
    assert.notEqual(roleId, 'new');

    const stored = await apiGet(server, `/api/roles/${roleId}`, client.token);
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.json().name, 'Lead watcher');
    assert.deepEqual([...stored.json().permissions].sort(), ['flows:view', 'leads:view']);

    await page.getByRole('link', { name: 'All roles' }).click();
    await page.getByTestId('role-row').filter({ hasText: 'Lead watcher' }).waitFor();
    await screenshot(page, 'roles');

    // The operator, with that role.
    await page.getByRole('link', { name: 'Operators' }).click();
    await page.waitForURL('**/settings/operators');
    await page.getByRole('button', { name: 'New operator' }).click();
    await fillOperator(page, WATCHER);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('operator-saved').waitFor();
    const operatorId = new URL(page.url()).pathname.split('/').pop()!;
    const operator = await apiGet(server, `/api/operators/${operatorId}`, client.token);
    assert.equal(operator.status, 200, operator.text);
    assert.equal(operator.json().role_id, roleId);
    assert.equal(operator.json().email, WATCHER.email);

    await page.getByRole('link', { name: 'All operators' }).click();
    const row = page.getByTestId('operator-row').filter({ hasText: WATCHER.email });
    await row.waitFor();
    assert.match(await row.innerText(), /Lead watcher/);
    await screenshot(page, 'operators');

    // A second operator with the same email: the API's message is shown.
    await page.getByRole('button', { name: 'New operator' }).click();
    await fillOperator(page, { ...WATCHER, name: 'Someone else' });
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/operators') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    assert.equal(refused.status(), 409);
    const { detail } = await refused.json();
    assert.equal((await page.getByTestId('operator-errors').innerText()).trim(), detail);
    assert.match(page.url(), /\/settings\/operators\/new$/, 'nothing was made, the form stays');
    await screenshot(page, 'operator-editor-error');

    // The role is held now: deleting it is refused with the API's reason, inside the dialog.
    await page.goto(`http://127.0.0.1:${server.port}/settings/roles/${roleId}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    assert.match(await page.getByTestId('confirm-error').innerText(), /Operators still hold this role/);
    await screenshot(page, 'role-delete-refused');
    assert.equal((await apiGet(server, `/api/roles/${roleId}`, client.token)).status, 200);

    // The operator signs in with their own fresh browser: the nav offers only what the role grants.
    const { page: theirs } = await openBrowser(t);
    await theirs.goto(`http://127.0.0.1:${server.port}/login`);
    await theirs.getByLabel('Email').fill(WATCHER.email);
    await theirs.getByLabel('Password').fill(WATCHER.password);
    await theirs.getByRole('button', { name: 'Sign in' }).click();
    await theirs.getByTestId('operator-email').filter({ hasText: WATCHER.email }).waitFor();
    const nav = theirs.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Leads' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Flows' }).count(), 1);
    for (const hidden of ['Operators', 'Roles', 'Partners', 'Campaigns', 'Traffic providers']) {
      assert.equal(await nav.getByRole('link', { name: hidden, exact: true }).count(), 0, `${hidden} is hidden`);
    }
    // Typing the address anyway shows the API's refusal, not a broken page.
    await theirs.goto(`http://127.0.0.1:${server.port}/settings/operators`);
    assert.match(await theirs.getByRole('alert').innerText(), /operators:view/);
  },
);

async function fillOperator(page: Page, o: typeof WATCHER) {
  await page.waitForURL('**/settings/operators/new');
  await page.getByLabel('Name').fill(o.name);
  await page.getByLabel('Email').fill(o.email);
  await page.getByRole('textbox', { name: 'Role' }).click();
  await page.getByRole('option', { name: 'Lead watcher' }).click();
  await page.getByLabel('Initial password').fill(o.password);
  // Adding an operator gives a person a password: the API asks for the acting admin's own.
  await page.getByLabel('Your current password').fill(ADMIN.password);
}

test('an admin turns off the two-factor sign-in of an operator locked out of it', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);
  const role = await client.create('/api/roles', { name: 'Lead watcher', permissions: ['leads:view'] });
  const op = await client.create('/api/operators', {
    name: WATCHER.name,
    email: WATCHER.email,
    password: WATCHER.password,
    role_id: role.id,
    current_password: ADMIN.password,
  });
  // They turn 2FA on themselves…
  const theirs = (
    await client.send('POST', '/api/auth/login', { email: WATCHER.email, password: WATCHER.password }, '')
  ).json().token;
  const { secret } = (await client.send('POST', '/api/profile/2fa/enrol', undefined, theirs)).json();
  const confirmed = await client.send('POST', '/api/profile/2fa/confirm', { code: totpAt(secret, Date.now()) }, theirs);
  assert.equal(confirmed.status, 200, confirmed.text);
  const passwordOnly = () =>
    client.send('POST', '/api/auth/login', { email: WATCHER.email, password: WATCHER.password }, '');
  assert.equal((await passwordOnly()).json().code, 'totp_required');

  // …then lose their phone and their recovery codes: the admin turns it off for them.
  const { page } = await openBrowser(t);
  await signIn(page, server);
  await page.getByTestId('operator-email').waitFor();
  await page.goto(`http://127.0.0.1:${server.port}/settings/operators/${op.id}`);
  const box = page.getByTestId('operator-two-factor');
  await box.getByText('on', { exact: true }).waitFor();
  await box.getByRole('button', { name: 'Turn off' }).click();
  // It needs the admin's own password (rule 13): without it the API's refusal shows in the dialog.
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Turn off' }).click();
  await dialog.getByTestId('confirm-error').filter({ hasText: 'current_password' }).waitFor();
  await dialog.getByLabel('Your current password').fill(ADMIN.password);
  await dialog.getByRole('button', { name: 'Turn off' }).click();
  await box.getByText('off', { exact: true }).waitFor();
  await screenshot(page, 'operator-2fa-off');
  assert.equal((await passwordOnly()).status, 200, 'the password alone signs them in again');

  // Setting their password asks for the admin's own too, and only then.
  assert.equal(await page.getByLabel('Your current password').count(), 0);
  await page.getByLabel('New password').fill('wanda-new-password-2');
  await page.getByLabel('Your current password').fill(ADMIN.password);
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('operator-saved').waitFor();
  const newPassword = await client.send(
    'POST',
    '/api/auth/login',
    { email: WATCHER.email, password: 'wanda-new-password-2' },
    '',
  );
  assert.equal(newPassword.status, 200, newPassword.text);
});
