// Issue 26, item 6: from an empty install (setup done, signed in) to a first delivered lead,
// following the Overview's first-run checklist and a partner template: at most 15 clicks and no
// JSON typed, on a desktop and on a phone (390×844, where no page of the walk may be wider than
// the screen). Every click goes through click(), every text typed through type(). The partner is
// a real loopback HTTP server shaped like the template; the test lead goes to the intake API with
// the token and the command the dashboard shows, as an operator would send it.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { request } from '../processes.js';
import { json, startPartner } from '../partner-server.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const CRM_TOKEN = 'crm-token-0123456789abcdef';
const AUTOLOGIN = 'https://broker.example/autologin/L-1';
const MAX_CLICKS = 15;

/** The two sizes the walk is made at, and how each goes back to the Overview without the menu's burger. */
const SIZES = [
  {
    name: 'desktop',
    width: 1280,
    height: 800,
    overview: (page: Page) =>
      page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview', exact: true }),
  },
  {
    name: 'phone',
    width: 390,
    height: 844,
    // The menu is behind the burger here: the name in the header leads home in one tap.
    overview: (page: Page) => page.getByRole('banner').getByRole('link', { name: 'Leadgate' }),
  },
];

async function walk(t: TestContext, size: (typeof SIZES)[number]) {
  const { server, client } = await startServerAndClient(t);
  // A broker CRM taking JSON with its token in an Api-Key header (the first template's shape).
  const partner = await startPartner(t, (r, res) => {
    if (r.headers['api-key'] !== CRM_TOKEN || !r.json?.firstName || !r.json?.email)
      return json(res, 401, { success: false, error: 'bad token or fields' });
    json(res, 200, { success: true, data: { leadId: 'L-1', autologinUrl: AUTOLOGIN } });
  });

  const { page } = await openBrowser(t);
  await page.setViewportSize({ width: size.width, height: size.height });
  await signIn(page, server);

  // Each screen of the walk, as it is when something on it is clicked or typed into, fits the screen.
  const fits = async (what: string) => {
    const width = Number(await page.evaluate('document.documentElement.scrollWidth'));
    assert.ok(width <= size.width, `${what}: the page is ${width} px wide on a ${size.width} px screen`);
  };
  let clicks = 0;
  const typed: string[] = [];
  const click = async (l: Locator) => {
    clicks++;
    await l.waitFor();
    await fits(`before click ${clicks} (${page.url()})`);
    await l.click();
  };
  const type = async (l: Locator, text: string) => {
    typed.push(text);
    await l.fill(text);
    await fits(`after typing ${text} (${page.url()})`);
  };
  const checklist = page.getByTestId('first-run');
  const done = async () =>
    (await checklist.getByTestId('first-run-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-done'))))
      .map((d) => (d === 'true' ? 1 : 0))
      .join('');
  const overview = async (expected: string) => {
    await click(size.overview(page));
    await checklist.getByTestId('first-run-step').first().waitFor();
    await waitUntil(`checklist ${expected}`, async () => (await done()) === expected);
    await fits(`the Overview with the checklist at ${expected}`);
  };

  // The empty Overview says what to make, in order, none of it done.
  await checklist.waitFor();
  assert.equal(await done(), '00000');
  await fits('the first Overview');
  await assertAccessible(page, `overview first run (${size.name})`);
  await screenshot(page, `onboarding-checklist-${size.name}-start`);

  // 1. A traffic provider: its token and intake command shown once.
  await click(checklist.getByRole('link', { name: 'Add a traffic provider' }));
  await type(page.getByLabel('Name', { exact: true }), 'Media Buyers');
  await click(page.getByRole('button', { name: 'Save' }));
  const intakeToken = (await page.getByTestId('provider-token').innerText()).trim();
  const command = await page.locator('pre', { hasText: 'curl -X POST' }).innerText();
  const intakeUrl = new URL(/curl -X POST (\S+)/.exec(command)![1]);
  await click(page.getByRole('button', { name: 'Done' }));
  await overview('10000');

  // 2. A partner from the template: only its name, URL and token typed.
  await click(checklist.getByRole('link', { name: 'Add a partner' }));
  await click(page.getByRole('button', { name: 'JSON POST, API token in a header' }));
  await type(page.getByLabel('Name', { exact: true }), 'Broker One');
  await type(page.getByLabel('URL', { exact: true }), partner.url);
  assert.equal(await page.getByLabel('Header 1 name').inputValue(), 'Api-Key');
  await type(page.getByLabel('Header 1 value'), CRM_TOKEN);
  await click(page.getByRole('button', { name: 'Save' }));
  await page.waitForURL(/\/partners\/[^/n][^/]*$/);
  await overview('11000');

  // 3. A flow: the one partner is its target already.
  await click(checklist.getByRole('link', { name: 'Make a flow' }));
  await type(page.getByLabel('Name', { exact: true }), 'Main flow');
  await page.getByRole('textbox', { name: 'Partner of target 1' }).waitFor();
  await waitUntil(
    'the partner preselected',
    async () => (await page.getByRole('textbox', { name: 'Partner of target 1' }).inputValue()) === 'Broker One',
  );
  await click(page.getByRole('button', { name: 'Save' }));
  await page.waitForURL(/\/flows\/[^/n][^/]*$/);
  await overview('11100');

  // 4. A campaign: the one provider and the one flow are chosen already.
  await click(checklist.getByRole('link', { name: 'Make a campaign' }));
  await type(page.getByLabel('Name', { exact: true }), 'Spring campaign');
  await waitUntil(
    'the flow preselected',
    async () => (await page.getByRole('textbox', { name: 'Flow' }).inputValue()) === 'Main flow',
  );
  assert.equal(await page.getByRole('textbox', { name: 'Traffic provider' }).inputValue(), 'Media Buyers');
  await click(page.getByRole('button', { name: 'Save' }));
  await page.waitForURL(/\/campaigns\/[^/n][^/]*$/);
  await overview('11110');

  // 5. The test lead, sent to the intake URL shown with the provider's token.
  const answer = await request(
    server.port,
    'POST',
    intakeUrl.pathname,
    {
      first_name: 'Ada',
      last_name: 'Lovelace',
      email: 'ada@example.com',
      phone: '+4915123456789',
      country: 'DE',
      ip: '203.0.113.7',
    },
    { authorization: `Bearer ${intakeToken}` },
  );
  assert.equal(answer.status, 201, answer.text);
  const lead = (await client.send('GET', `/api/leads/${answer.json().id}`)).json();
  assert.equal(lead.status, 'delivered');
  assert.equal(lead.autologin_url, AUTOLOGIN);
  assert.equal(partner.received.length, 1);
  assert.equal(partner.received[0].json.email, 'ada@example.com');

  // The last step ticks by itself when the lead arrives: every step done, the checklist is gone.
  await waitUntil('the checklist gone', async () => (await checklist.count()) === 0);
  assert.equal(await page.getByTestId('kpi-30d-delivered').innerText(), '1');
  await fits('the Overview with the first lead');
  await screenshot(page, `onboarding-checklist-${size.name}-end`);

  assert.ok(clicks <= MAX_CLICKS, `${clicks} clicks`);
  for (const text of typed) assert.ok(!text.includes('{') && !text.includes('"'), `typed JSON: ${text}`);
  t.diagnostic(`${size.name}: ${clicks} clicks, typed ${typed.join(' | ')}`);
}

for (const size of SIZES)
  test(
    `from an empty install to a first delivered lead with a template on a ${size.name} (${size.width}×${size.height}): at most ${MAX_CLICKS} clicks, no JSON typed, the checklist ticking on the way`,
    { timeout: 180_000 },
    async (t) => {
      if (!chromiumAvailable(t)) return;
      await walk(t, size);
    },
  );

test(
  'placeholder chips insert at the cursor in the URL and the body template; the template picker and the checklist fit a phone; the checklist can be dismissed',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server } = await startServerAndClient(t);
    const { page } = await openBrowser(t);
    await signIn(page, server);
    const checklist = page.getByTestId('first-run');
    await checklist.waitFor();

    await page.getByRole('link', { name: 'Partners', exact: true }).click();
    await page.getByRole('button', { name: 'New partner' }).click();
    await page.getByRole('button', { name: 'Form POST (x-www-form-urlencoded)' }).click();
    assert.equal(await page.getByRole('textbox', { name: 'Body format' }).inputValue(), 'Form');

    // In the body template: at the cursor, which then stands after the placeholder.
    const body = page.getByLabel('Body template (JSON)');
    const before = await body.inputValue();
    const at = before.indexOf('"first_name"');
    await body.click();
    await body.evaluate((el: any, i) => el.setSelectionRange(i, i), at);
    await page.getByRole('button', { name: 'Insert {{lead.sub_id2}}' }).click();
    assert.equal(await body.inputValue(), before.slice(0, at) + '{{lead.sub_id2}}' + before.slice(at));
    assert.equal(await body.evaluate((el: any) => el.selectionStart), at + '{{lead.sub_id2}}'.length);

    // In the URL, once it was the field edited.
    const url = page.getByLabel('URL', { exact: true });
    await url.fill('https://broker.example/leads?c=&x=1');
    await url.evaluate((el: any) => el.setSelectionRange(31, 31));
    await page.getByRole('button', { name: 'Insert {{lead.country}}' }).click();
    assert.equal(await url.inputValue(), 'https://broker.example/leads?c={{lead.country}}&x=1');

    // On a phone, the template picker and the checklist stay within the screen.
    await page.setViewportSize({ width: 390, height: 844 });
    const picker = await page.getByTestId('partner-templates').boundingBox();
    assert.ok(picker && picker.x >= 0 && picker.x + picker.width <= 390, JSON.stringify(picker));
    page.once('dialog', (d) => void d.accept());
    await page.goto(`http://127.0.0.1:${server.port}/`);
    await checklist.waitFor();
    const card = await checklist.boundingBox();
    assert.ok(card && card.x >= 0 && card.x + card.width <= 390, JSON.stringify(card));
    await screenshot(page, 'onboarding-checklist-phone');

    // Dismissed, it stays gone.
    await checklist.getByRole('button', { name: 'Dismiss' }).click();
    assert.equal(await checklist.count(), 0);
    await page.reload();
    await page.getByTestId('kpi-30d-leads').waitFor();
    assert.equal(await checklist.count(), 0);
  },
);
