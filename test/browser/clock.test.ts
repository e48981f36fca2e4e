// Issue 26, item 2: one clock. The operator's profile is in UTC and the browser is in Berlin,
// then in New York: a lead registered just before or just after midnight UTC shows the same date
// and time on the Leads table and in its drawer, falls in the same day of the Analytics day
// report, and a Leads date filter on its UTC day lists it. Analytics runs in another zone when
// one is picked, kept in the URL across a reload.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import SQLite from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import type { Child, ServerClient } from '../processes.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

// Ada: the 24th in UTC and New York, the 25th in Berlin. Bob: the 25th in UTC and Berlin, the 24th in New York.
const LEADS = [
  { first: 'Ada', last: 'Late', at: '2026-11-24T23:30:00.000Z', utcDay: '2026-11-24' },
  { first: 'Bob', last: 'Early', at: '2026-11-25T00:30:00.000Z', utcDay: '2026-11-25' },
];
const DAYS = ['2026-11-24', '2026-11-25'];

/** The two leads, through the intake, then moved to their registration time in the server's SQLite file. */
async function seed(server: Child, api: ServerClient, t: TestContext) {
  const partner = await startPartner(t, accepting());
  const p = await api.create('/api/partners', { name: 'Taker', integration: defaultIntegration(partner.url) });
  const flow = await api.create('/api/flows', { name: 'Flow', targets: [{ partner_id: p.id, priority: 1 }] });
  const provider = await api.create('/api/traffic-providers', { name: 'Provider' });
  await api.create('/api/campaigns', {
    name: 'Campaign',
    traffic_provider_id: provider.id,
    flow_id: flow.id,
    payout: { model: 'cpl', amount: 10 },
  });
  // The intake stamps its own time; WAL lets this connection write beside the server.
  const db = new SQLite(path.join(server.dataDir, 'leadgate.db'));
  db.pragma('busy_timeout = 5000');
  t.after(() => db.close());
  for (const [i, lead] of LEADS.entries()) {
    const res = await api.send(
      'POST',
      '/api/intake/leads',
      {
        first_name: lead.first,
        last_name: lead.last,
        email: `clock${i}@example.com`,
        phone: `+4915112${345670 + i}`,
        country: 'DE',
        ip: '203.0.113.7',
      },
      provider.token,
    );
    assert.equal(res.status, 201, res.text);
    db.prepare('UPDATE leads SET created_at = ? WHERE id = ?').run(lead.at, res.json().id);
  }
}

/** An instant as the page's own Intl writes it in `zone` (undefined: the browser's zone). */
const formatted = (page: Page, at: string, zone?: string) =>
  page.evaluate<string>(
    `new Intl.DateTimeFormat(undefined, { timeZone: ${JSON.stringify(zone)}, dateStyle: 'medium', timeStyle: 'medium' }).format(new Date(${JSON.stringify(at)}))`,
  );

/** The Leads rows shown, by last name. */
async function shownLeads(page: Page): Promise<string[]> {
  const rows = await page.getByTestId('lead-row').allInnerTexts();
  return LEADS.filter((l) => rows.some((r) => r.includes(l.last))).map((l) => l.last);
}

/** Leads per day in the Analytics day report on screen (a day it leaves out: 0). */
async function leadsByDay(page: Page): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const day of DAYS) {
    const row = page.locator(`[data-testid="report-row"][data-key="${day}"]`);
    out[day] = (await row.count()) ? Number((await row.locator('td').nth(1).innerText()).replace(/\D/g, '')) : 0;
  }
  return out;
}

async function filterLeadsByDay(page: Page, day: string) {
  const from = page.getByLabel('From', { exact: true });
  if (!(await from.isVisible())) await page.getByTestId('more-filters-toggle').click();
  await from.fill(day);
  await page.getByLabel('To', { exact: true }).fill(day);
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await page.waitForURL(new RegExp(`date_from=${day}&date_to=${day}`));
}

const RUNS = [
  { zone: 'Europe/Berlin', viewport: { width: 1440, height: 900 } },
  { zone: 'America/New_York', viewport: { width: 1440, height: 900 } },
  { zone: 'America/New_York', viewport: { width: 390, height: 844 } },
];

test('one clock: the profile zone on Leads, the drawer, Analytics and the date filter, whatever the browser zone', async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client: api } = await startServerAndClient(t);
  const profile = await api.send('PATCH', '/api/profile', { timezone: 'UTC' });
  assert.equal(profile.status, 200, profile.text);
  await seed(server, api, t);

  for (const run of RUNS) {
    await t.test(`browser in ${run.zone}, ${run.viewport.width}×${run.viewport.height}`, async (t) => {
      const { page } = await openBrowser(t, { timezoneId: run.zone });
      await page.setViewportSize(run.viewport);
      await signIn(page, server);
      await page.getByTestId('operator-name').waitFor();
      assert.equal(await page.evaluate<string>('Intl.DateTimeFormat().resolvedOptions().timeZone'), run.zone);

      // Leads: each lead at its UTC time, which this browser's zone would have written otherwise.
      await page.goto(`http://127.0.0.1:${server.port}/leads`);
      await waitUntil('both leads listed', async () => (await shownLeads(page)).length === 2);
      assert.equal(await page.getByTestId('zone-note').first().innerText(), 'Times in UTC');
      const drawer = page.getByTestId('lead-drawer');
      for (const lead of LEADS) {
        const utc = await formatted(page, lead.at, 'UTC');
        const local = await formatted(page, lead.at);
        assert.notEqual(utc, local, 'the browser zone writes this lead on another day');
        const row = page.getByTestId('lead-row').filter({ hasText: lead.last });
        const text = await row.innerText();
        assert.ok(text.includes(utc), `${lead.last} in the table: ${text}, expected ${utc}`);
        assert.ok(!text.includes(local), `${lead.last} in the table is not in the browser zone`);

        await row.click();
        await drawer.waitFor();
        await drawer.getByText(lead.first, { exact: false }).first().waitFor();
        const registered = drawer.locator('tr', { has: page.locator('th', { hasText: /^Registered$/ }) }).locator('td');
        assert.equal(await registered.innerText(), utc, `${lead.last} in the drawer`);
        assert.equal(await drawer.getByTestId('zone-note').innerText(), 'Times in UTC');
        await page.keyboard.press('Escape');
        await drawer.waitFor({ state: 'hidden' });
      }
      await assertAccessible(page, `Leads (${run.zone})`);

      // Another screen, another renderer: the audit log's newest entry at its UTC time, the column named.
      const [entry] = (await api.send('GET', '/api/audit-log?limit=1')).json().data;
      await page.goto(`http://127.0.0.1:${server.port}/audit`);
      const auditTime = page.getByTestId('audit-row').first().locator('td').first();
      await auditTime.waitFor();
      assert.equal(await auditTime.innerText(), await formatted(page, entry.at, 'UTC'));
      assert.equal(await page.getByRole('columnheader', { name: 'Time (UTC)' }).count(), 1);
      await page.goto(`http://127.0.0.1:${server.port}/leads`);
      await waitUntil('both leads listed again', async () => (await shownLeads(page)).length === 2);

      // A date filter on a lead's UTC day lists that lead, and only it.
      for (const lead of LEADS) {
        await filterLeadsByDay(page, lead.utcDay);
        await waitUntil(`${lead.utcDay} lists ${lead.last}`, async () => {
          const shown = await shownLeads(page);
          return shown.length === 1 && shown[0] === lead.last;
        });
      }

      // Analytics by day, in the operator's zone: each lead on its UTC day.
      await page.goto(`http://127.0.0.1:${server.port}/analytics?date_from=${DAYS[0]}&date_to=${DAYS[1]}`);
      await page.getByTestId('report-table').waitFor();
      assert.deepEqual(await leadsByDay(page), { [DAYS[0]]: 1, [DAYS[1]]: 1 });
      assert.match(await page.getByTestId('report-range').innerText(), /\(UTC\)/);
      await assertAccessible(page, `Analytics (${run.zone})`);

      // Run in the browser's zone instead: both leads on that zone's day, kept in the URL.
      const zoneDay = run.zone === 'Europe/Berlin' ? DAYS[1] : DAYS[0];
      const picker = page.getByRole('textbox', { name: 'Time zone' });
      await picker.click();
      await picker.fill(run.zone);
      await page.getByRole('option', { name: run.zone, exact: true }).click();
      await page.getByRole('button', { name: 'Show report' }).click();
      await page.waitForURL(/[?&]timezone=/);
      assert.equal(new URL(page.url()).searchParams.get('timezone'), run.zone);
      const inZone = async () => {
        const byDay = await leadsByDay(page);
        return byDay[zoneDay] === 2 && (await page.getByTestId('report-range').innerText()).includes(`(${run.zone})`);
      };
      await waitUntil(`both leads on ${zoneDay} in ${run.zone}`, inZone);
      await page.reload();
      await page.getByTestId('report-table').waitFor();
      await waitUntil(`still both on ${zoneDay} after a reload`, inZone);
      assert.equal(await picker.inputValue(), run.zone);
    });
  }
});
