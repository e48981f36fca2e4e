// Opening a partner in the editor: a partner without a status pull is a normal state, not an
// error (the API answers null; no 404 in the console), on desktop and phone.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultIntegration } from '../partner-server.js';
import { chromiumAvailable, openBrowser, signIn, startServerAndClient } from './harness.js';

test(
  'opening a partner without a status pull logs no console error and fires no 4xx',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const partner = await client.create('/api/partners', {
      name: 'No Pull Ltd',
      integration: defaultIntegration('https://broker.example/leads'),
    });
    const { page } = await openBrowser(t);
    const consoleErrors: string[] = [];
    const failed: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.request().method()} ${r.url()}`);
    });
    await signIn(page, server);
    await page.waitForURL((u) => !u.pathname.startsWith('/login'));
    for (const viewport of [
      { width: 1440, height: 900 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(viewport);
      const pull = page.waitForResponse((r) => r.url().endsWith(`/api/partners/${partner.id}/status-pull`));
      await page.goto(`http://127.0.0.1:${server.port}/partners/${partner.id}`);
      assert.equal((await pull).status(), 200);
      const sync = page.getByTestId('status-sync');
      await sync.waitFor();
      assert.equal(await sync.getByTestId('sync-health').count(), 0, 'no health for a pull that does not exist');
      assert.equal(await sync.getByTestId('sync-errors').count(), 0);
      await page.getByRole('heading', { name: 'Status sync' }).waitFor();
    }
    assert.deepEqual(failed, [], 'no request answered 4xx or 5xx');
    assert.deepEqual(consoleErrors, [], 'no console error');
  },
);
