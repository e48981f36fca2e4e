// Partners in a real browser against a real loopback partner: the API's URL message shown at the
// URL field, a partner created with a header, body template and answer paths, its postback URL
// shown once, and "Send test lead" showing what was sent and what the partner answered.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import { chromiumAvailable, openBrowser, screenshot, startServerAndClient, signIn } from './harness.js';

const SECRET = 'key-0123456789abcdef';

test(
  'an operator creates a partner, sees its postback URL once and sends it a test lead',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const partnerApi = await startPartner(t, accepting());
    const { server, client } = await startServerAndClient(t);

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByRole('link', { name: 'Partners' }).click();
    await page.waitForURL('**/partners');
    await page.getByTestId('partners-empty').waitFor();
    await page.getByRole('button', { name: 'New partner' }).click();
    await page.waitForURL('**/partners/new');

    // Name left empty, a total cap under the daily cap, "UK" for a country: every error comes back at once.
    await page.getByLabel('Daily cap').fill('50');
    await page.getByLabel('Total cap').fill('10');
    const countries = page.getByRole('textbox', { name: 'Countries' });
    await countries.fill('UK');
    await countries.press('Enter');
    const url = page.getByLabel('URL', { exact: true });
    await url.fill('ftp://nowhere.example/leads');
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header 1 name').fill('X-Api-Key');
    await page.getByLabel('Header 1 value').fill(SECRET);
    const template = page.getByLabel('Body template (JSON)');
    await template.fill('{"email": "{{lead.email}}", '); // not JSON: the browser's finding joins the API's
    await page.getByLabel('Success path').fill('success');
    await page.getByLabel('Lead id path').fill('data.id');
    await page.getByLabel('Autologin path').fill('data.autologin_url');

    // The invalid URL goes to the API as typed; its message comes back to the URL field.
    const [refused] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/partners') && r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Save' }).click(),
    ]);
    assert.equal(refused.status(), 400);
    const apiError = (await refused.json()).errors.find((e: { field: string }) => e.field === 'integration.url');
    assert.ok(apiError, 'the API names integration.url');
    await page.getByTestId('partner-errors').waitFor();
    assert.equal(await url.getAttribute('aria-invalid'), 'true');
    const describedBy = (await url.getAttribute('aria-describedby')) ?? '';
    const fieldMessage = await page
      .locator(`[id="${describedBy.split(' ').find((d) => d.endsWith('-error'))}"]`)
      .innerText();
    assert.equal(fieldMessage.trim(), apiError.message);
    // One save shows them all, in the labels' words, never the API's field names.
    const summary = await page.getByTestId('partner-errors').innerText();
    for (const line of [
      'Body template: is not valid JSON',
      `URL: ${apiError.message}`,
      'Name: must not be empty',
      'Total cap: must be at least the daily cap (50)',
      'Countries, item 1: "UK" is not an ISO 3166-1 alpha-2 code; use GB',
    ]) {
      assert.ok(summary.includes(line), `${line} in ${summary}`);
    }
    assert.doesNotMatch(summary, /integration\.|countries\[|total_cap|daily_cap/);
    await screenshot(page, 'partner-editor-errors');
    // Each message goes as its field is fixed; the others stay until theirs are.
    await url.fill(partnerApi.url);
    assert.equal(await url.getAttribute('aria-invalid'), 'false');
    assert.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true');
    assert.doesNotMatch(await page.getByTestId('partner-errors').innerText(), /URL:/);
    await page.getByLabel('Name', { exact: true }).fill('Acme Broker');
    await page.getByLabel('Total cap').fill('');
    await countries.press('Backspace'); // removes the UK tag
    await template.fill('{"email": "{{lead.email}}", "name": "{{lead.first_name}}"}');

    assert.equal(
      await page.getByTestId('partner-errors').count(),
      0,
      'every message cleared by its fix, and the refusal with them',
    );

    // Every placeholder a template may use is listed, from the API.
    assert.equal(await page.getByTestId('template-placeholders').locator('code').count(), 14);
    assert.match(await page.getByTestId('template-placeholders').innerText(), /\{\{lead\.sub_id5\}\}/);

    // Before the first save, a test lead the operator edited goes out with the integration as typed.
    await page.getByRole('button', { name: 'Edit test lead' }).click();
    const leadFields = page.getByTestId('test-lead-fields');
    await leadFields.getByLabel('First name').fill('Grace');
    await leadFields.getByLabel('Sub ID 1').fill('click-42');
    await page.getByRole('button', { name: 'Send test lead' }).click();
    await page.getByTestId('test-lead-result').waitFor();
    assert.equal(partnerApi.received.length, 1);
    assert.equal(partnerApi.received[0].json.name, 'Grace');
    assert.equal(partnerApi.received[0].headers['x-api-key'], SECRET);
    assert.match(await page.getByTestId('test-lead-request').innerText(), /"name":"Grace"/);
    await screenshot(page, 'partner-test-before-save');

    // Working hours: the time zone is picked from the IANA zones, as on the operator form, not typed.
    await page.getByText('Working hours (off: leads are accepted at any time)').click();
    const zone = page.getByRole('textbox', { name: 'Time zone' });
    await zone.fill('Europe/Berl');
    await page.getByRole('option', { name: 'Europe/Berlin' }).click();
    assert.equal(await zone.inputValue(), 'Europe/Berlin');

    // Fixed: created, and the postback URL is shown once.
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('postback-url').waitFor();
    const postbackUrl = await page.getByTestId('postback-url-value').innerText();
    assert.match(postbackUrl, new RegExp(`^http://127\\.0\\.0\\.1:${server.port}/api/postback/lgp_`));
    // No public base URL is set: the link is on this loopback address, and the screen says a partner cannot reach it.
    assert.match(await page.getByTestId('local-link-note').innerText(), /cannot reach from the internet/);
    // Its Hosting link opens the hosting screen in a new tab: the token shown once stays here.
    const [hosting] = await Promise.all([
      page.context().waitForEvent('page'),
      page.getByTestId('hosting-link').click(),
    ]);
    await hosting.getByRole('heading', { name: 'Hosting' }).first().waitFor();
    assert.match(hosting.url(), /\/settings\/hosting$/);
    await hosting.close();
    assert.equal(await page.getByTestId('postback-url-value').innerText(), postbackUrl, 'the secret is still shown');
    assert.match(page.url(), /\/partners\/[0-9a-f-]{36}$/);
    const id = page.url().split('/').pop()!;
    // The header value comes back masked, and the UI says what that means.
    assert.equal(await page.getByLabel('Header 1 value').inputValue(), '••••cdef');
    assert.match(
      await page.getByTestId('headers-masked-note').innerText(),
      /masked value as it is to keep the stored value/,
    );
    await screenshot(page, 'partner-editor');

    const stored = await client.send('GET', `/api/partners/${id}`);
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.json().working_hours?.timezone, 'Europe/Berlin');
    const p = stored.json();
    assert.equal(p.daily_cap, 50);
    assert.deepEqual(p.integration.body_template, { email: '{{lead.email}}', name: '{{lead.first_name}}' });
    assert.equal(p.integration.lead_id_path, 'data.id');

    // "Send test lead" with the masked header: the partner gets the stored secret, the UI shows it masked.
    await page.getByRole('button', { name: 'Send test lead' }).click();
    await page.getByTestId('test-lead-result').waitFor();
    assert.equal((await page.getByTestId('test-lead-outcome').innerText()).toLowerCase(), 'accepted');
    assert.equal(partnerApi.received.length, 2);
    assert.equal(partnerApi.received[1].headers['x-api-key'], SECRET);
    assert.equal(partnerApi.received[1].json.email, 'test.lead@example.com');
    const sent = await page.getByTestId('test-lead-request').innerText();
    assert.match(sent, new RegExp(`^POST ${partnerApi.url.replace(/[.]/g, '\\.')}`));
    assert.match(sent, /••••cdef/);
    assert.ok(!sent.includes(SECRET), 'the secret header value is not shown');
    assert.match(sent, /test\.lead@example\.com/);
    const answer = await page.getByTestId('test-lead-response').innerText();
    assert.match(answer, /^200/);
    assert.match(answer, /"success":true/);
    assert.match(answer, /P-\d+/);
    await screenshot(page, 'partner-test-lead');

    // Once left, the postback URL is not shown again; the list shows the partner.
    await page.reload();
    await page.getByLabel('Name', { exact: true }).waitFor();
    assert.equal(await page.getByTestId('postback-url').count(), 0);
    await page.getByRole('link', { name: '← All partners' }).click();
    const row = page.getByTestId('partner-row').filter({ hasText: 'Acme Broker' });
    await row.waitFor();
    assert.match(await row.innerText(), /active[\s\S]*All[\s\S]*50 \/ —[\s\S]*Mon–Fri 09:00–18:00 \(Europe\/Berlin\)/i);
    await screenshot(page, 'partners');
  },
);

test(
  'rotating the postback token shows the new URL once; the old one stops working',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const partner = await client.create('/api/partners', {
      name: 'Rotating Partner',
      integration: defaultIntegration('http://127.0.0.1:9/leads'),
    });
    const oldPath = new URL(partner.postback_url as string, 'http://x').pathname;
    const postback = (p: string) => client.send('GET', `${p}?lead_id=00000000-0000-7000-8000-000000000000&status=ftd`);
    assert.equal((await postback(oldPath)).status, 404, 'the token works: only the lead is unknown');

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-email').waitFor(); // signed in
    await page.goto(`http://127.0.0.1:${server.port}/partners/${partner.id}`);
    assert.equal(await page.getByTestId('postback-url').count(), 0, 'no URL shown before rotating');
    await page.getByRole('button', { name: 'Rotate postback token' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate postback token' }).click();
    const shown = await page.getByTestId('postback-url-value').innerText();
    const newPath = new URL(shown).pathname;
    assert.match(newPath, /^\/api\/postback\/lgp_/);
    assert.notEqual(newPath, oldPath);
    await screenshot(page, 'partner-postback-rotated');

    assert.equal((await postback(oldPath)).status, 401, 'the old URL is refused');
    assert.equal((await postback(newPath)).status, 404, 'the new URL works');
    await page.reload();
    await page.getByRole('button', { name: 'Rotate postback token' }).waitFor();
    assert.equal(await page.getByTestId('postback-url').count(), 0, 'not shown again after a reload');
  },
);
