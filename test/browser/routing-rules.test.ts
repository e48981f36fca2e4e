// Issue 16 in a real browser: the broker example set up in the dashboard ("broker X takes 50 DE and
// 20 AT leads a day, at most 10 an hour, Monday to Friday, and pays $40 per lead with a 10 %
// conversion guarantee"): the partner's deal, the flow target's caps and schedule, a campaign's
// payout per country, each with the API's message at the field first; then "Where would this lead
// go?", the cap usage screen and the CRG report, on a real loopback partner.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sampleLead } from '../distribution-world.js';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import { request } from '../processes.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

test(
  'the broker example, set up in the dashboard, shows in the simulator, the cap usage and the CRG report',
  { timeout: 180_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const broker = await client.create('/api/partners', {
      name: 'Broker X',
      integration: defaultIntegration((await startPartner(t, accepting())).url),
    });
    const backup = await client.create('/api/partners', {
      name: 'Backup Buyer',
      integration: defaultIntegration((await startPartner(t, accepting())).url),
    });
    const main = await client.create('/api/flows', {
      name: 'Main',
      targets: [
        { partner_id: broker.id, priority: 1 },
        { partner_id: backup.id, priority: 2 },
      ],
    });
    const anyDay = await client.create('/api/flows', {
      name: 'Any day',
      targets: [{ partner_id: broker.id, priority: 1 }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Affiliate' });
    const deAt = await client.create('/api/campaigns', {
      name: 'DE AT',
      traffic_provider_id: provider.id,
      flow_id: main.id,
      payout: { model: 'cpl', amount: 25 },
    });
    const spare = await client.create('/api/campaigns', {
      name: 'Any day',
      traffic_provider_id: provider.id,
      flow_id: anyDay.id,
      payout: { model: 'cpl', amount: 25 },
    });

    const { page } = await openBrowser(t);
    await signIn(page, server);

    // The deal: $40 per lead with a 10 % guarantee; a rate with three decimals is named at its field first.
    // Mantine's switches hide their input: clicked as a script would, which React sees as a change.
    const toggle = (label: string) =>
      page.getByLabel(label).evaluate((el) => (el as unknown as { click(): void }).click());
    // In-app navigation: the session lives in the page's memory.
    const open = async (menu: string, name: string, path: string) => {
      await page.getByRole('link', { name: menu, exact: true }).click();
      await page.getByRole('link', { name, exact: true }).click();
      await page.waitForURL(`**${path}`);
    };
    await open('Partners', 'Broker X', `/partners/${broker.id}`);
    await page.getByRole('textbox', { name: 'What the partner pays' }).click();
    await page.getByRole('option', { name: 'CPL: a price per delivered lead' }).click();
    await page.getByLabel('Price (USD)').fill('40');
    await toggle('Conversion-rate guarantee');
    const rate = page.getByLabel('Promised FTD rate (%)');
    await rate.fill('10.125');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await waitUntil('the rate refused at its field', async () => (await rate.getAttribute('aria-invalid')) === 'true');
    assert.match(
      await page.getByTestId('partner-errors').innerText(),
      /Promised FTD rate \(%\): must have at most 2 decimals/,
    );
    await rate.fill('10');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('partner-saved').waitFor();
    assert.deepEqual((await client.send('GET', `/api/partners/${broker.id}`)).json().deal, {
      model: 'cpl',
      amount: 40,
      currency: 'USD',
      by_country: {},
      crg: { rate: 10, period: 'month' },
    });
    await assertAccessible(page, 'partner editor with a deal');
    await screenshot(page, 'partner-deal');
    await page.getByRole('link', { name: 'Partners', exact: true }).click();
    const dealCell = page
      .getByTestId('partner-row')
      .filter({ hasText: 'Broker X' })
      .getByTestId('partner-deal-summary');
    // The list shows what it had cached while it reads the partners again.
    await waitUntil(
      'the list to show the deal',
      async () => (await dealCell.textContent()) === 'CPL $40 · CRG 10 % a month',
    );

    // The target's caps and schedule: 50 DE and 20 AT a day, 10 an hour, Monday to Friday.
    await open('Flows', 'Main', `/flows/${main.id}`);
    await page.getByLabel('Hourly cap of target 1').fill('10');
    const caps = 'Daily caps per country, target 1';
    for (const [i, [country, cap]] of [
      ['DE', '50'],
      ['UK', '20'],
    ].entries()) {
      await page.getByRole('button', { name: 'Add a country cap' }).first().click();
      await page.getByLabel(`${caps}: country ${i + 1}`).fill(country);
      await page.getByLabel(`${caps}: cap ${i + 1}`).fill(cap);
    }
    await toggle('Own schedule for target 1');
    await page.getByLabel('Time zone of target 1').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('flow-errors').waitFor();
    assert.match(await page.getByTestId('flow-errors').innerText(), /Target 1, caps per country, UK: .*use GB/);
    await page.getByLabel(`${caps}: country 2`).fill('AT');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('flow-saved').waitFor();
    const target = (await client.send('GET', `/api/flows/${main.id}`)).json().targets[0];
    assert.deepEqual(
      [target.hourly_cap, target.country_caps, target.schedule],
      [10, { DE: 50, AT: 20 }, { timezone: 'Europe/Berlin', days: [1, 2, 3, 4, 5], from: '09:00', to: '18:00' }],
    );

    // Where would a DE lead go on a Monday morning, and on a Saturday? (The browser runs in UTC.)
    const verdicts = async (at: string) => {
      await page.getByLabel('Arriving at').fill(at);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith('/api/routing/simulate')),
        page.getByRole('button', { name: 'Simulate' }).click(),
      ]);
      assert.equal(answer.status(), 200);
      await waitUntil('the simulation shown', async () => (await page.getByTestId('simulation-row').count()) === 2);
      return page.getByTestId('simulation-row').allTextContents();
    };
    const monday = await verdicts('2026-11-30T09:30');
    assert.match(monday[0], /Broker X.*Would be offered.*100 %/);
    assert.match(monday[1], /Backup Buyer.*Would be offered/);
    const saturday = await verdicts('2026-11-28T09:30');
    assert.match(saturday[0], /Broker X.*Outside hours.*outside working hours/);
    assert.match(saturday[1], /Backup Buyer.*Would be offered/);
    await assertAccessible(page, 'flow editor with caps and the simulator');
    await screenshot(page, 'flow-simulator');

    // The campaign pays its provider $20 for AT leads, $25 for the rest.
    await open('Campaigns', 'DE AT', `/campaigns/${deAt.id}`);
    await page.getByRole('button', { name: 'Add a country payout' }).click();
    await page.getByLabel('Payouts per country: country 1').fill('AT');
    await page.getByLabel('Payouts per country: payout 1').fill('20');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByTestId('campaign-saved').waitFor();
    assert.deepEqual((await client.send('GET', `/api/campaigns/${deAt.id}`)).json().payout.by_country, { AT: 20 });

    // Three leads through the flow with no schedule: sold at $40 under the guarantee.
    for (let i = 0; i < 3; i++) {
      const res = await request(
        server.port,
        'POST',
        '/api/intake/leads',
        { ...sampleLead(), campaign_id: spare.id },
        { authorization: `Bearer ${provider.token}` },
      );
      assert.equal(res.status, 201, res.text);
    }

    await page.getByRole('link', { name: 'Cap usage' }).click();
    await page.getByTestId('caps-table').waitFor();
    const usage = await page.getByTestId('caps-row').allTextContents();
    assert.deepEqual(
      usage.map((r) => r.replace(/\s+/g, ' ')),
      ['Broker XFlow MainAllLeads—0 / 10—', 'Broker XFlow MainATLeads0 / 20——', 'Broker XFlow MainDELeads0 / 50——'],
    );
    await assertAccessible(page, 'cap usage');
    await screenshot(page, 'cap-usage');

    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.getByText('CRG deals').click();
    await page.getByTestId('crg-table').waitFor();
    const row = page.getByTestId('crg-row');
    assert.equal(await row.count(), 1);
    // Delivered this month: the month is running, so it is not short yet (FTDs missing so far).
    assert.match((await row.textContent()) ?? '', /Broker X.*10 %3.*0 %0\.3\$120\.00\$120\.00Running/);
    await assertAccessible(page, 'CRG report');
    await screenshot(page, 'crg-report');
  },
);
