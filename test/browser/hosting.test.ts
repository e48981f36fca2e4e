// The hosting panel in a real browser: server facts, the public base URL (refused, then saved),
// and a SQLite backup made, listed, downloaded and deleted.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ADMIN, apiGet, chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient } from './harness.js';

test(
  'an admin reads the hosting panel, sets the public URL and makes, downloads and deletes a backup',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-name').waitFor();
    await page.getByRole('link', { name: 'Hosting' }).click();
    await page.waitForURL('**/settings/hosting');

    const storage = page.getByTestId('hosting-storage');
    await storage.waitFor();
    assert.match(await storage.innerText(), /SQLite/);
    assert.ok((await storage.innerText()).includes(server.dataDir), 'the data folder is shown');
    assert.match(
      await page.getByTestId('hosting-server').innerText(),
      new RegExp(process.version.replace(/\./g, '\\.')),
    );
    const { version } = JSON.parse(readFileSync('package.json', 'utf8'));
    assert.ok((await page.getByTestId('hosting-version').innerText()).includes(version));
    assert.match(await page.getByTestId('hosting-mail').innerText(), /Not mailed: no mail server is set up/);

    // A URL with a path: the API's message shows at the field; a good one is stored as an origin.
    const url = page.getByLabel('Public base URL');
    await url.fill('https://leads.example.com/app');
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/hosting/public-url')),
      page.getByRole('button', { name: 'Save', exact: true }).click(),
    ]);
    assert.equal(refused.status(), 400);
    await page.getByText('must not have a path').waitFor();
    await url.fill('HTTPS://Leads.Example.com/');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('public-url-saved').waitFor();
    assert.equal(await url.inputValue(), 'https://leads.example.com');

    // Back up now: the new file is listed.
    await page.getByTestId('backups-empty').waitFor();
    await page.getByRole('button', { name: 'Back up now' }).click();
    await page.getByTestId('backup-made').waitFor();
    const row = page.getByTestId('backup-row');
    await row.first().waitFor();
    const listed = await apiGet(server, '/api/hosting/backups', client.token);
    const [backup] = listed.json().data;
    assert.match(await row.first().innerText(), new RegExp(backup.name.replace(/\./g, '\\.')));
    await screenshot(page, 'hosting');

    // Download: the browser saves the very file.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      row.first().getByRole('button', { name: backup.name }).click(),
    ]);
    assert.equal(download.suggestedFilename(), backup.name);
    const saved = readFileSync((await download.path())!);
    assert.ok(saved.equals(readFileSync(path.join(server.dataDir, 'backups', backup.name))));

    // Delete, confirmed: gone from the list and the disk.
    await row.first().getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete backup' }).click();
    await page.getByTestId('backups-empty').waitFor();
    assert.deepEqual((await apiGet(server, '/api/hosting/backups', client.token)).json().data, []);
  },
);

test(
  'an operator with hosting:view and hosting:edit but not the admin role is told backups are for admins only',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const role = await client.create('/api/roles', {
      name: 'Hosting desk',
      permissions: ['hosting:view', 'hosting:edit'],
    });
    const desk = { email: 'hosting-desk@example.test', password: 'hosting-desk-password-1' };
    await client.create('/api/operators', {
      ...desk,
      name: 'Harper Host',
      role_id: role.id,
      current_password: ADMIN.password,
    });

    const { page } = await openBrowser(t);
    const backupCalls: number[] = [];
    page.on('response', (r) => {
      if (new URL(r.url()).pathname.startsWith('/api/hosting/backups')) backupCalls.push(r.status());
    });
    await page.goto(`http://127.0.0.1:${server.port}/login`);
    await page.getByLabel('Email').fill(desk.email);
    await page.getByLabel('Password').fill(desk.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('operator-name').waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/settings/hosting`);
    await page.getByTestId('hosting-storage').waitFor();
    const notice = page.getByTestId('backups-admins-only');
    await notice.waitFor();
    assert.match(await notice.innerText(), /admins only/);
    assert.equal(await page.getByRole('button', { name: 'Back up now' }).count(), 0, 'no button that can only fail');
    assert.deepEqual(backupCalls, [], 'the panel does not ask for what it would be refused');
    await screenshot(page, 'hosting-not-admin');
  },
);
