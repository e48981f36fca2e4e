// Flows in a real browser: open a flow, get the API's validation message at the right field,
// fix it, add a second partner as a target and check through the API that it was stored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defaultIntegration } from '../partner-server.js';
import { chromiumAvailable, openBrowser, screenshot, startServerAndClient, signIn } from './harness.js';

test(
  'an operator edits a flow: API validation shown at the field, then targets saved',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    // Nothing listens on port 9: the partners are never called here.
    const integration = defaultIntegration('http://127.0.0.1:9/leads');
    const alpha = await client.create('/api/partners', { name: 'Alpha Partner', integration });
    const beta = await client.create('/api/partners', { name: 'Beta Partner', integration });
    const flow = await client.create('/api/flows', {
      name: 'DE traffic',
      targets: [{ partner_id: alpha.id, priority: 1, weight: 100 }],
    });

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
    const fieldMessage = await page
      .locator(`[id="${describedBy.split(' ').find((d) => d.endsWith('-error'))}"]`)
      .innerText();
    assert.equal(fieldMessage.trim(), apiError.message);
    assert.match(
      await page.getByTestId('flow-errors').innerText(),
      new RegExp(`Target 1, weight: ${escape(apiError.message)}`),
    );
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
    // Country caps sit beside the daily, hourly and total caps, shown, not folded under "More caps".
    assert.equal(await page.getByLabel('More caps for target 2').count(), 0);
    const caps = page.getByTestId('target-caps').nth(1);
    for (const label of ['Daily cap of target 2', 'Hourly cap of target 2', 'Total cap of target 2'])
      assert.ok(await caps.getByLabel(label).isVisible(), label);
    await caps.getByRole('button', { name: 'Add a country cap' }).click();
    await page.getByLabel('Daily caps per country, target 2: country 1').fill('DE');
    await page.getByLabel('Daily caps per country, target 2: cap 1').fill('20');
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
      country_caps: t.country_caps,
    }));
    assert.deepEqual(targets, [
      {
        partner_id: alpha.id,
        priority: 1,
        weight: 70,
        daily_cap: null,
        countries: [],
        schedule: null,
        country_caps: {},
      },
      {
        partner_id: beta.id,
        priority: 2,
        weight: 100,
        daily_cap: 50,
        countries: ['DE'],
        schedule: null,
        country_caps: { DE: 20 },
      },
    ]);
  },
);

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test(
  'unsaved changes ask before leaving; delete refuses a flow in use with the API message and removes a free one',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const partner = await client.create('/api/partners', {
      name: 'Alpha Partner',
      integration: defaultIntegration('http://127.0.0.1:9/leads'),
    });
    const targets = [{ partner_id: partner.id, priority: 1, weight: 100 }];
    const spare = await client.create('/api/flows', { name: 'Spare flow', targets });
    const busy = await client.create('/api/flows', { name: 'Busy flow', targets });
    const provider = await client.create('/api/traffic-providers', { name: 'Media buyer' });
    await client.create('/api/campaigns', {
      name: 'Summer DE',
      traffic_provider_id: provider.id,
      flow_id: busy.id,
      payout: { model: 'cpl', amount: 1 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Flows' }).click();
    await page
      .getByTestId('flow-row')
      .filter({ hasText: 'Spare flow' })
      .getByRole('link', { name: 'Spare flow' })
      .click();
    await page.waitForURL(`**/flows/${spare.id}`);

    // An edit not saved: leaving asks; "Cancel" stays with the edit intact, "OK" leaves.
    await page.getByLabel('Name').fill('Spare flow (renamed)');
    const asked = new Promise<string>((resolve) =>
      page.once('dialog', (d) => {
        resolve(d.message());
        void d.dismiss();
      }),
    );
    await page.getByRole('link', { name: 'Partners' }).click();
    // The question itself is the signal (no fixed wait); then two frames for a navigation to show if "Cancel" did not hold it.
    assert.match(await asked, /unsaved changes/);
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))');
    assert.ok(page.url().endsWith(`/flows/${spare.id}`), page.url());
    assert.equal(await page.getByLabel('Name').inputValue(), 'Spare flow (renamed)');
    page.once('dialog', (d) => void d.accept());
    await page.getByRole('link', { name: 'Partners' }).click();
    await page.waitForURL('**/partners');
    assert.equal((await client.send('GET', `/api/flows/${spare.id}`)).json().name, 'Spare flow', 'nothing was saved');

    // A flow a campaign routes through: the API's 409 names the campaign, and the flow stays.
    await page.goto(`http://127.0.0.1:${server.port}/flows/${busy.id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByTestId('confirm-error').filter({ hasText: 'Summer DE' }).waitFor();
    await screenshot(page, 'flow-delete-refused');
    assert.equal((await client.send('GET', `/api/flows/${busy.id}`)).status, 200);

    // A free flow is deleted, and the list no longer has it.
    await page.goto(`http://127.0.0.1:${server.port}/flows/${spare.id}`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL('**/flows');
    await page.getByTestId('flow-row').filter({ hasText: 'Busy flow' }).waitFor();
    assert.equal(await page.getByTestId('flow-row').filter({ hasText: 'Spare flow' }).count(), 0);
    assert.equal((await client.send('GET', `/api/flows/${spare.id}`)).status, 404);
  },
);
