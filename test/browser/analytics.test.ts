// Overview and Analytics in a real browser: the empty Overview of a fresh server, then the same
// server filled by the real `npm run demo-data` command, its KPIs and top lists checked against
// the API, and the Analytics report grouped by country (and partner inside) matching the API's
// rows, with an invalid choice answered by the API's own message.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { type Child } from '../processes.js';
import {
  ADMIN,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The demo-data command, writing into the running server's SQLite file (WAL lets both at it). */
function demoData(server: Child, leads: number): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: server.dataDir };
  delete env.DATABASE_URL;
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/demo-data.ts', '--leads', String(leads), '--days', '45'],
      { cwd: ROOT, env, timeout: 120_000 },
      (err, _out, stderr) => (err ? reject(new Error(`demo-data failed: ${stderr}`)) : resolve()),
    ),
  );
}

const text = async (page: Page, testId: string) => (await page.getByTestId(testId).innerText()).trim();

test(
  'the Overview shows the API’s KPIs and top lists; Analytics groups by country as the API does',
  { timeout: 180_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client: api } = await startServerAndClient(t);
    const get = async (urlPath: string) => {
      const res = await api.send('GET', urlPath);
      assert.equal(res.status, 200, `${urlPath}: ${res.text}`);
      return res.json();
    };

    const { page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-email').waitFor();

    // A fresh server: zeros and a friendly empty state, not an empty chart.
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await page.getByTestId('overview-empty').waitFor();
    assert.equal(await text(page, 'kpi-30d-leads'), '0');
    assert.equal(await page.getByTestId('report-chart').count(), 0);
    await screenshot(page, 'overview-empty');

    await demoData(server, 1500);
    await page.reload();
    await page.getByTestId('top-partners').waitFor();

    // Every KPI as the API has it, formatted the way the page's locale writes numbers.
    const locale = await page.evaluate<string>('navigator.language');
    const whoami = await get('/api/auth/whoami');
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: whoami.operator.timezone }).format(new Date());
    const periods = {
      today: await get(`/api/analytics/summary?date_from=${today}&date_to=${today}`),
      '30d': await get('/api/analytics/summary'),
    };
    assert.ok(periods['30d'].totals.leads > 500 && periods['30d'].totals.ftds > 0, 'demo data in the last 30 days');
    for (const [id, summary] of Object.entries(periods)) {
      const money = (n: number) =>
        new Intl.NumberFormat(locale, { style: 'currency', currency: summary.currency }).format(n);
      const expected = {
        leads: new Intl.NumberFormat(locale).format(summary.totals.leads),
        delivered: new Intl.NumberFormat(locale).format(summary.totals.delivered),
        ftds: new Intl.NumberFormat(locale).format(summary.totals.ftds),
        conversion_rate: new Intl.NumberFormat(locale, {
          style: 'percent',
          minimumFractionDigits: 1,
          maximumFractionDigits: 1,
        }).format(summary.totals.conversion_rate),
        revenue: money(summary.totals.revenue),
        cost: money(summary.totals.cost),
        profit: money(summary.totals.profit),
      };
      for (const [key, value] of Object.entries(expected))
        assert.equal(await text(page, `kpi-${id}-${key}`), value, `${id} ${key}`);
    }

    // The top five partners and providers with a name, in the API's order (most leads first).
    for (const [testId, groupBy] of [
      ['top-partners', 'partner'],
      ['top-providers', 'traffic_provider'],
    ]) {
      const report = await get(`/api/analytics/report?group_by=${groupBy}`);
      const top = report.rows.filter((r: { key: string | null }) => r.key !== null).slice(0, 5);
      const shown = await page
        .getByTestId(testId)
        .getByTestId('top-row')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')));
      assert.deepEqual(
        shown,
        top.map((r: { key: string }) => r.key),
        testId,
      );
    }
    await page.getByTestId('report-chart').waitFor();
    await screenshot(page, 'overview');

    // Analytics, grouped by country: the table's rows and totals are the API's.
    await page.getByRole('link', { name: 'Analytics', exact: true }).click();
    await page.waitForURL('**/analytics');
    await page.getByTestId('report-table').waitFor();
    await page.getByRole('textbox', { name: 'Group by' }).click();
    await page.getByRole('option', { name: 'Country' }).click();
    await page.getByRole('button', { name: 'Show report' }).click();
    await page.waitForURL(/[?&]group_by=country/);
    const byCountry = await get('/api/analytics/report?group_by=country');
    // The table follows the answer: wait for the API's row count and first row.
    const rowsSelector = `document.querySelectorAll('[data-testid="report-row"]')`;
    const expected = `${rowsSelector}.length === ${byCountry.rows.length} && ${rowsSelector}[0].dataset.key === ${JSON.stringify(byCountry.rows[0].key ?? '')}`;
    await waitUntil('the report rows of the API', () => page.evaluate(expected) as Promise<boolean>);
    const rows = await page.getByTestId('report-row').evaluateAll((trs) =>
      trs.map((tr) => ({
        key: tr.getAttribute('data-key'),
        label: tr.querySelector('td')!.textContent,
        leads: tr.querySelector('[data-measure="leads"]')!.textContent,
      })),
    );
    const count = (n: number) => new Intl.NumberFormat(locale).format(n);
    assert.deepEqual(
      rows,
      byCountry.rows.map((r: { key: string | null; label: string; leads: number }) => ({
        key: r.key ?? '',
        label: r.label,
        leads: count(r.leads),
      })),
    );
    assert.equal(
      await page.getByTestId('report-totals').locator('[data-measure="ftds"]').innerText(),
      count(byCountry.totals.ftds),
    );
    // Flagged leads: the count and its share of the leads (the demo data raises some fraud flags).
    assert.ok(byCountry.totals.flagged > 0, 'the demo data has flagged leads');
    const percent = new Intl.NumberFormat(locale, {
      style: 'percent',
      minimumFractionDigits: 1,
      maximumFractionDigits: 1,
    });
    assert.equal(
      await page.getByTestId('report-totals').locator('[data-measure="flagged"]').innerText(),
      `${count(byCountry.totals.flagged)} (${percent.format(byCountry.totals.flagged_rate)})`,
    );
    await page.getByTestId('report-chart').waitFor();
    await screenshot(page, 'analytics');

    // Reloading the bookmarked URL shows the same report.
    await page.reload();
    await page.getByTestId('report-row').first().waitFor();
    assert.equal(await page.getByTestId('report-row').count(), byCountry.rows.length);

    // The same grouping twice: the API refuses, and its message is what the operator reads.
    await page.getByRole('textbox', { name: 'Then by' }).click();
    await page.getByRole('option', { name: 'Country' }).click();
    await page.getByRole('button', { name: 'Show report' }).click();
    const refused = await api.send('GET', '/api/analytics/report?group_by=country&then_by=country');
    assert.equal(refused.status, 400);
    const { field, message } = refused.json().errors[0];
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal((await alert.innerText()).trim(), `${field}: ${message}`);
    assert.equal(await page.getByTestId('report-table').count(), 0, 'no stale table under the error');
    await screenshot(page, 'analytics-error');

    // Partners inside countries: a country opens to the API's partner rows.
    await page.getByRole('textbox', { name: 'Then by' }).click();
    await page.getByRole('option', { name: 'Partner' }).click();
    await page.getByRole('button', { name: 'Show report' }).click();
    await page.waitForURL(/then_by=partner/);
    const nested = await get('/api/analytics/report?group_by=country&then_by=partner');
    const first = nested.rows[0];
    await page.getByRole('button', { name: `Expand ${first.label}` }).click();
    const children = await page
      .getByTestId('report-child-row')
      .evaluateAll((trs) => trs.map((tr) => tr.querySelector('td')!.textContent));
    assert.deepEqual(
      children,
      first.children.map((c: { label: string }) => c.label),
    );

    // The CSV is the report on screen as detail rows: each inner group with its group, no subtotals, no total.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('report-csv').click()]);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    assert.match(download.suggestedFilename(), /^report-country-partner-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);
    assert.equal(csv[0].split(',').slice(0, 4).join(','), 'country,country_key,partner,partner_key');
    const childCount = nested.rows.reduce((n: number, r: { children: unknown[] }) => n + r.children.length, 0);
    assert.equal(csv.length, 1 + childCount);
    assert.ok(!csv.some((l) => l.startsWith('Total,')));

    // The date boxes show the range the report covers (the last 30 days by default), not placeholders.
    const dayOf = (ms: number) =>
      new Intl.DateTimeFormat('en-CA', { timeZone: whoami.operator.timezone }).format(new Date(ms));
    assert.equal(await page.getByLabel('From', { exact: true }).inputValue(), dayOf(Date.parse(nested.from)));
    assert.equal(await page.getByLabel('To', { exact: true }).inputValue(), today);
    assert.equal(await page.getByRole('button', { name: 'Last 30 days' }).getAttribute('aria-pressed'), 'true');

    // A preset applies at once, in the operator's days; the chart of days by country draws a line per country.
    await page.goto(`http://127.0.0.1:${server.port}/analytics?group_by=day&then_by=country`);
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await page.waitForURL(/date_from=/);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('date_to'), today);
    assert.equal(url.searchParams.get('date_from'), dayOf(Date.parse(`${today}T12:00:00Z`) - 6 * 86_400_000));
    await waitUntil(
      'the preset marked',
      async () => (await page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed')) === 'true',
    );
    const week = await get(`/api/analytics/report?group_by=day&${url.searchParams}`);
    assert.equal(week.rows.length, 7);
    const chart = page.locator('[data-testid="report-chart"][data-breakdown="country"]');
    await chart.waitFor();
    const biggest = new Map<string, number>();
    for (const r of week.rows) for (const c of r.children) biggest.set(c.label, (biggest.get(c.label) ?? 0) + c.leads);
    const top = [...biggest].sort((a, b) => b[1] - a[1])[0][0];
    assert.ok((await chart.innerText()).includes(top), `the legend names ${top}`);
    await screenshot(page, 'analytics-day-country');

    // By day alone: FTDs on their own axis at the right, so they do not lie flat under the leads.
    await page.goto(`http://127.0.0.1:${server.port}/analytics`);
    await page.getByTestId('report-chart').waitFor();
    assert.equal(await page.locator('[data-testid="report-chart"] .recharts-yAxis').count(), 2);
    await screenshot(page, 'analytics-ftd-axis');

    // Partner performance: per partner from the attempts, and the provider × partner grid, as the API counts them.
    await page.getByTestId('analytics-view').getByText('Partner performance', { exact: true }).click();
    await page.waitForURL(/view=partners/);
    const perf = await get('/api/analytics/partners?then_by=traffic_provider');
    assert.ok(perf.rows.length >= 2 && perf.totals.rejected > 0, 'demo data has partners that refuse leads');
    const perfRows = page.getByTestId('partners-row');
    await waitUntil('the partner rows', async () => (await perfRows.count()) === perf.rows.length);
    for (const [i, r] of perf.rows.entries()) {
      const cells = await perfRows.nth(i).locator('td').allInnerTexts();
      assert.equal(cells[0], r.label);
      assert.equal(cells[1], r.attempts.toLocaleString(locale));
      assert.equal(
        cells[5],
        new Intl.NumberFormat(locale, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(
          r.acceptance_rate,
        ),
      );
      // Link opens: "—" where the partner does not track its autologin links.
      if (r.open_rate === null) assert.equal(cells[7], '—');
      else assert.ok(cells[7].includes(`${r.opened_links}/${r.tracked_links}`), `${r.label}: ${cells[7]}`);
      if (r.top_reasons.length) assert.ok(cells[8].includes(r.top_reasons[0].reason), `${r.label}: ${cells[8]}`);
    }
    // The Date type and grouping pickers are the leads report's: gone here.
    assert.equal(await page.getByLabel('Group by').count(), 0);
    const cell = perf.rows[0].children[0];
    const gridCell = page.locator(
      `[data-testid="grid-row"][data-key="${cell.key}"] td[data-partner="${perf.rows[0].key}"]`,
    );
    assert.match(
      await gridCell.innerText(),
      new RegExp(`${cell.accepted.toLocaleString(locale)}/${cell.attempts.toLocaleString(locale)}`),
    );
    await screenshot(page, 'analytics-partners');
    const [partnerCsv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('report-csv').click()]);
    assert.match(
      partnerCsv.suggestedFilename(),
      /^partners-traffic_provider-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/,
    );
    const partnerLines = readFileSync((await partnerCsv.path())!, 'utf8')
      .trim()
      .split('\r\n');
    assert.equal(
      partnerLines.length,
      2 + perf.rows.length + perf.rows.reduce((n: number, r: { children: unknown[] }) => n + r.children.length, 0),
    );

    // An operator whose role has no analytics: a welcome with what they can open, no broken screen.
    const role = await api.create('/api/roles', { name: 'Lead desk', permissions: ['leads:view'] });
    const desk = { email: 'desk@example.test', password: 'desk-password-123' };
    await api.create('/api/operators', {
      ...desk,
      name: 'Dana Desk',
      role_id: role.id,
      current_password: ADMIN.password,
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    await page.getByLabel('Email').fill(desk.email);
    await page.getByLabel('Password').fill(desk.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByTestId('operator-email').waitFor();
    await page.goto(`http://127.0.0.1:${server.port}/`);
    const welcome = page.getByTestId('overview-welcome');
    await welcome.waitFor();
    assert.deepEqual(await welcome.getByRole('link').allInnerTexts(), ['Leads', 'Review queue', 'API keys', 'Profile']);
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await nav.getByRole('link', { name: 'Leads', exact: true }).count(), 1, 'the menu is there');
    assert.equal(await nav.getByRole('link', { name: 'Analytics', exact: true }).count(), 0);
    assert.equal(await nav.getByRole('link', { name: 'Overview', exact: true }).count(), 0);
    await page.goto(`http://127.0.0.1:${server.port}/analytics`);
    await page.getByTestId('analytics-forbidden').waitFor();
  },
);
