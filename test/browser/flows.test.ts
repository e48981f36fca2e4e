// Flows in a real browser: open a flow, get the API's validation message at the right field,
// fix it, add a second partner as a target and check through the API that it was stored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServerClient } from '../processes.js';
import { defaultIntegration } from '../partner-server.js';
import { chromiumAvailable, openBrowser, screenshot, startServer, signIn } from './harness.js';

test('an operator edits a flow: API validation shown at the field, then targets saved', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const server = await startServer(t);
  const client = await new ServerClient(server.port).login();
  t.after(() => client.close());
  // Nothing listens on port 9: the partners are never called here.
  const integration = defaultIntegration('http://127.0.0.1:9/leads');
  const alpha = await client.create('/api/partners', { name: 'Alpha Partner', integration });
  const beta = await client.create('/api/partners', { name: 'Beta Partner', integration });
  const flow = await client.create('/api/flows', { name: 'DE traffic', targets: [{ partner_id: alpha.id, priority: 1, weight: 100 }] });

  const { page } = await openBrowser(t);
  await signIn(page, server);

  await page.getByRole('link', { name: 'Flows' }).click();
  await page.waitForURL('**/flows');
  const listRow = page.getByTestId('flow-row').filter({ hasText: 'DE traffic' });
  await listRow.waitFor();
  assert.match(await listRow.innerText(), /Alpha Partner/);
  await screenshot(page, 'flows');

  await listRow.getByRole('link', { name: 'DE traffic' }).click();
  await page.waitForURL(`**/flows/${flow.id}`);
  const weight = page.getByLabel('Weight of target 1');
  assert.equal(await weight.inputValue(), '100');
  await screenshot(page, 'flow-editor');

  // An invalid weight goes to the API as typed; its message comes back to that very field.
  await weight.fill('0');
  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith(`/api/flows/${flow.id}`) && r.request().method() === 'PATCH'),
    page.getByRole('button', { name: 'Save' }).click(),
  ]);
  assert.equal(refused.status(), 400);
  const problem = await refused.json();
  const apiError = problem.errors.find((e: { field: string }) => e.field === 'targets[0].weight');
  assert.ok(apiError, JSON.stringify(problem));
  await page.getByTestId('flow-errors').waitFor();
  assert.equal(await weight.getAttribute('aria-invalid'), 'true');
  const describedBy = (await weight.getAttribute('aria-describedby')) ?? '';
  const fieldMessage = await page.locator(`[id="${describedBy.split(' ').find((d) => d.endsWith('-error'))}"]`).innerText();
  assert.equal(fieldMessage.trim(), apiError.message);
  assert.match(await page.getByTestId('flow-errors').innerText(), new RegExp(`Target 1 weight: ${escape(apiError.message)}`));
  await screenshot(page, 'flow-editor-error');

  // Fixed, plus the second partner at priority 2.
  await weight.fill('70');
  await page.getByRole('button', { name: 'Add target' }).click();
  await page.getByRole('textbox', { name: 'Partner of target 2' }).click();
  await page.getByRole('option', { name: 'Beta Partner' }).click();
  assert.equal(await page.getByLabel('Priority of target 2').inputValue(), '2');
  await page.getByLabel('Daily cap of target 2').fill('50');
  const countries = page.getByRole('textbox', { name: 'Countries of target 2' });
  await countries.fill('de');
  await countries.press('Enter');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByTestId('flow-saved').waitFor();
  assert.equal(await page.getByTestId('flow-errors').count(), 0, 'the error summary is gone once saved');
  assert.equal(await weight.getAttribute('aria-invalid'), 'false');

  const stored = await client.send('GET', `/api/flows/${flow.id}`);
  assert.equal(stored.status, 200, stored.text);
  const targets = stored.json().targets.map((t: Record<string, unknown>) => ({
    partner_id: t.partner_id,
    priority: t.priority,
    weight: t.weight,
    daily_cap: t.daily_cap,
    countries: t.countries,
    schedule: t.schedule,
  }));
  assert.deepEqual(targets, [
    { partner_id: alpha.id, priority: 1, weight: 70, daily_cap: null, countries: [], schedule: null },
    { partner_id: beta.id, priority: 2, weight: 100, daily_cap: 50, countries: ['DE'], schedule: null },
  ]);
});

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
