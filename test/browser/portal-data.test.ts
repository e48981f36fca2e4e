// The portal's data and integration screens in a real browser (issue 27): a provider user finds
// a lead by its sub id (phone and desktop), reads its statistics, downloads both CSVs, reads a
// campaign's intake docs, sets a postback and test-sends it to a loopback tracker, and sees the
// FTD hold its operator set in the provider editor stated plainly; saves its log, checkpoint and
// public key from History and the verification script accepts them; turns on two-factor sign-in
// and signs in with a code. axe-core on every screen.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { totpAt } from '../../src/server/auth/totp.js';
import { sampleLead } from '../distribution-world.js';
import { accepting, defaultIntegration, startPartner } from '../partner-server.js';
import { request } from '../processes.js';
import { startReceiver } from '../webhook-receiver.js';
import {
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  waitUntil,
  wideElements,
} from './harness.js';

const EMAIL = 'tracker@affiliate.example';
const PASSWORD = 'provider-password-2';

async function assertFitsPhone(page: Page, screen: string) {
  const { scrollWidth, lines } = await wideElements(page);
  assert.ok(scrollWidth <= 390 && lines.length === 0, `${screen}: ${scrollWidth} px wide\n${lines.join('\n')}`);
}

/** Clicks a portal menu entry (on a phone, through the burger). */
async function go(page: Page, label: string, phone = false) {
  if (phone) await page.getByRole('button', { name: 'Open menu' }).click();
  await page.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: label }).click();
}

/** The file a click downloads, as text. */
async function downloaded(page: Page, click: () => Promise<void>): Promise<string> {
  const [file] = await Promise.all([page.waitForEvent('download'), click()]);
  return readFileSync((await file.path())!, 'utf8');
}

test(
  'a provider user finds a lead by its sub id, reads its stats, downloads CSV and test-sends a postback',
  { timeout: 240_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const base = `http://127.0.0.1:${server.port}`;
    const tracker = await startReceiver(t);
    const partner = await client.create('/api/partners', {
      name: 'Hidden Broker',
      integration: defaultIntegration((await startPartner(t, accepting())).url),
    });
    const flow = await client.create('/api/flows', {
      name: 'Main',
      targets: [{ partner_id: partner.id, priority: 1 }],
    });
    const provider = await client.create('/api/traffic-providers', { name: 'Affiliate Seven' });
    await client.create('/api/campaigns', {
      name: 'DE Finance',
      traffic_provider_id: provider.id,
      flow_id: flow.id,
      payout: { model: 'cpl', amount: 10 },
    });
    for (const click of ['click-1', 'click-2', 'click-3']) {
      const r = await request(server.port, 'POST', '/api/intake/leads', sampleLead({ sub_id1: click }), {
        authorization: `Bearer ${provider.token}`,
      });
      assert.equal(r.status, 201, r.text);
    }
    const invited = await client.create(`/api/traffic-providers/${provider.id}/users`, { email: EMAIL });
    const accepted = await request(server.port, 'POST', '/api/portal/invitations/accept', {
      token: invited.invitation_token,
      password: PASSWORD,
    });
    assert.equal(accepted.status, 201, accepted.text);

    // The operator sets a 48 h FTD hold in the provider editor's portal settings.
    const { page: operator } = await openBrowser(t);
    await signIn(operator, server);
    await operator.getByTestId('operator-name').waitFor();
    await operator.goto(`${base}/traffic-providers/${provider.id}`);
    const settings = operator.getByTestId('portal-settings');
    await settings.getByLabel('FTD hold (hours)').fill('48');
    await settings.getByRole('button', { name: 'Save portal settings' }).click();
    await settings.getByTestId('portal-settings-saved').waitFor();
    await assertAccessible(operator, 'provider editor with portal settings');

    // The provider user signs in on a phone and finds a lead by its sub id.
    const { page } = await openBrowser(t);
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/login`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/portal`);
    assert.match(await page.getByTestId('ftd-hold').innerText(), /^FTDs are confirmed after 48 h/);
    await go(page, 'Leads', true);
    await page.getByTestId('portal-lead-row').nth(2).waitFor();
    await assertFitsPhone(page, 'portal leads');
    await page.getByLabel('Lead id or sub id').fill('click-2');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitUntil('one lead', async () => (await page.getByTestId('portal-lead-row').count()) === 1);
    await page.getByTestId('portal-lead-row').getByRole('button').click();
    const drawer = page.getByTestId('portal-lead-drawer');
    assert.equal(await drawer.getByTestId('lead-sub-id-1').innerText(), 'click-2');
    assert.match(await drawer.getByTestId('lead-payout').innerText(), /^10\.00 USD$/);
    assert.ok(!(await drawer.innerText()).includes('Hidden Broker'), 'never a partner name');
    await assertAccessible(page, 'portal lead drawer (phone)');
    await assertFitsPhone(page, 'portal lead drawer');
    await screenshot(page, 'portal-lead-drawer-phone');
    await page.getByRole('button', { name: 'Close' }).click();

    // On a desktop from here on: CSV of the filtered leads.
    await page.setViewportSize({ width: 1280, height: 800 });
    const leadsCsv = await downloaded(page, () => page.getByTestId('portal-leads-csv').click());
    const lines = leadsCsv.trim().split(/\r?\n/);
    assert.equal(lines.length, 2, leadsCsv);
    assert.match(lines[1], /click-2/);
    await assertAccessible(page, 'portal leads (desktop)');
    await screenshot(page, 'portal-leads-desktop');

    // Statistics: three leads today; by sub id; CSV.
    await go(page, 'Stats');
    const total = page.getByTestId('portal-stats-row').filter({ hasText: 'Total' });
    assert.match(await total.innerText(), /^Total\s+3\s/);
    await page.getByRole('textbox', { name: 'Group by' }).click();
    await page.getByRole('option', { name: 'Sub id 1' }).click();
    await page.getByTestId('portal-stats-row').filter({ hasText: 'click-3' }).waitFor();
    const statsCsv = await downloaded(page, () => page.getByTestId('portal-stats-csv').click());
    assert.match(statsCsv, /click-3/);
    await assertAccessible(page, 'portal stats');
    await screenshot(page, 'portal-stats');

    // The campaign's intake docs, with a curl to copy.
    await go(page, 'Campaigns');
    await page.getByRole('button', { name: /DE Finance/ }).click();
    assert.match(await page.getByTestId('campaign-curl').innerText(), /^curl /);
    await assertAccessible(page, 'portal campaign docs');

    // A postback to the tracker, saved and test-sent.
    await go(page, 'Postbacks');
    await page.getByRole('button', { name: 'Add postback' }).click();
    await page.getByLabel('Postback URL').fill(`${tracker.url}?click={sub_id1}`);
    await page.getByRole('button', { name: 'Save postbacks' }).click();
    await page.getByTestId('postbacks-saved').waitFor();
    await page.getByRole('button', { name: 'Send test postback' }).click();
    assert.match(await page.getByTestId('postback-test').innerText(), /HTTP 200/);
    assert.equal(tracker.received.length, 1, 'the test postback reached the tracker');
    await assertAccessible(page, 'portal postbacks');
    await screenshot(page, 'portal-postbacks');

    // The history: the latest signed checkpoint, the log, checkpoint and key saved; the
    // verification script (plain Node) accepts them.
    await go(page, 'History');
    await page.getByTestId('portal-checkpoint').waitFor();
    await assertAccessible(page, 'portal history');
    const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-portal-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const save = async (name: string, click: () => Promise<void>) => {
      writeFileSync(path.join(dir, name), await downloaded(page, click));
      return path.join(dir, name);
    };
    const logFile = await save('log.jsonl', () => page.getByTestId('download-log').click());
    const entries = readFileSync(logFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.ok(entries.length >= 3 && entries[0].seq === 1, `the log: ${entries.length} entries`);
    const checkpoint = await save('checkpoint.json', () =>
      page.getByRole('button', { name: 'Download the checkpoint' }).click(),
    );
    const key = await save('key.json', () => page.getByRole('button', { name: 'Download the public key' }).click());
    const verified = spawnSync(
      process.execPath,
      [
        'scripts/verify-provider-log.mjs',
        '--saved',
        logFile,
        '--current',
        logFile,
        '--checkpoint',
        checkpoint,
        '--public-key',
        key,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);

    // Each screen fits a phone.
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [label, path] of [
      ['Stats', 'stats'],
      ['Campaigns', 'campaigns'],
      ['Postbacks', 'postbacks'],
      ['History', 'history'],
      ['Profile', 'profile'],
    ]) {
      await page.goto(`${base}/portal/${path}`);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await page.waitForLoadState('networkidle');
      await assertFitsPhone(page, `portal ${label}`);
    }
    await assertAccessible(page, 'portal profile (phone)');

    // The profile's time zone: saved, and the dates are then shown in it.
    await page.getByRole('textbox', { name: 'Time zone' }).fill('Europe/Berlin');
    await page.getByRole('option', { name: 'Europe/Berlin' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('profile-saved').waitFor();
    await page.goto(`${base}/portal/leads`);
    assert.equal(await page.getByTestId('zone-note').innerText(), 'Times in Europe/Berlin');

    // Two-factor sign-in from the profile: the secret shown once, a code to turn it on, then
    // asked for at the next sign-in, which lands in the portal again.
    await go(page, 'Profile', true);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const secret = (await page.getByTestId('portal-totp-secret').innerText()).trim();
    await assertAccessible(page, 'portal two-factor set-up');
    await assertFitsPhone(page, 'portal two-factor set-up');
    await page.getByLabel('2. The 6-digit code it shows').fill(totpAt(secret, Date.now()));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByTestId('portal-two-factor-on').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${base}/login`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // The next step's code: the one that turned it on is spent (a code works once).
    await page.getByLabel('Authentication code').fill(totpAt(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${base}/portal`);
    await page.getByTestId('portal-shows').waitFor();
  },
);
