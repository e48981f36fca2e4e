// The traffic provider's portal in a real browser (issue 27): an operator invites a provider user
// from the provider editor, the user sets a password from the link and lands in the portal (on a
// phone and on a desktop, never in the dashboard), makes and revokes its own API key; the operator
// disables it; "View as provider" opens the portal read only in a new tab.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { request } from '../processes.js';
import {
  apiGet,
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServerAndClient,
  wideElements,
} from './harness.js';

const PASSWORD = 'provider-password-1';

/** Fails naming what reaches past a phone's right edge. */
async function assertFitsPhone(page: Page, screen: string) {
  const { scrollWidth, lines } = await wideElements(page);
  assert.ok(scrollWidth <= 390 && lines.length === 0, `${screen}: ${scrollWidth} px wide\n${lines.join('\n')}`);
}

test(
  'an invited provider user sets its password and lands in the portal on a phone and a desktop, never the dashboard',
  { timeout: 180_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const base = `http://127.0.0.1:${server.port}`;
    const provider = await client.create('/api/traffic-providers', { name: 'Media Buyers Ltd' });

    // The operator invites a user from the provider editor: the link is shown once.
    const { page: operator } = await openBrowser(t);
    await signIn(operator, server);
    await operator.getByTestId('operator-name').waitFor();
    await operator.goto(`${base}/traffic-providers/${provider.id}`);
    const panel = operator.getByTestId('portal-panel');
    await panel.getByTestId('portal-users-empty').waitFor();
    await panel.getByLabel('Email').fill('affiliate@example.com');
    await panel.getByRole('button', { name: 'Invite' }).click();
    const shown = operator.getByTestId('invitation-link');
    const link = (await shown.innerText()).trim();
    assert.match(link, new RegExp(`^${base}/portal/invitation#token=lgi_`));
    // No mail server here (SMTP_URL): the dialog says the link was not mailed.
    assert.match(await operator.getByTestId('invitation-mail').innerText(), /^Not mailed: no mail server is set up/);
    // No public base URL here: the note says how to get a link on one.
    assert.match(await operator.getByTestId('local-link-note').innerText(), /then renew the invitation to get a link/);
    await assertAccessible(operator, 'invitation link dialog');
    await screenshot(operator, 'portal-invitation-link');
    await operator.getByRole('button', { name: 'Done' }).click();
    const row = panel.getByTestId('portal-user-row').filter({ hasText: 'affiliate@example.com' });
    await row.getByTestId('portal-user-status').filter({ hasText: 'invited' }).waitFor();
    assert.ok(!(await operator.content()).includes(link), 'the link is gone once the dialog is closed');

    // On a phone: the link, a password, and the portal.
    const { page: phone } = await openBrowser(t);
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(link);
    await phone.getByLabel('New password').fill(PASSWORD);
    await phone.getByLabel('Repeat the password').fill(PASSWORD);
    await assertAccessible(phone, 'invitation page');
    await assertFitsPhone(phone, 'invitation page');
    await phone.getByRole('button', { name: 'Set password and sign in' }).click();
    await phone.waitForURL(`${base}/portal`);
    await phone.getByTestId('portal-shows').waitFor();
    assert.equal(await phone.getByTestId('portal-provider').innerText(), 'Media Buyers Ltd');
    assert.equal(await phone.getByTestId('view-as-banner').count(), 0);
    assert.equal(await phone.getByTestId('ftd-hold').count(), 0, 'no hold is set: none is stated');
    await assertAccessible(phone, 'portal overview (phone)');
    await assertFitsPhone(phone, 'portal overview');
    await screenshot(phone, 'portal-overview-phone');

    // Its own API key, through the phone's menu: shown once, works on the portal API, then revoked.
    await phone.getByRole('button', { name: 'Open menu' }).click();
    await phone.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'API keys' }).click();
    await phone.waitForURL('**/portal/api-keys');
    await phone.getByTestId('portal-keys-empty').waitFor();
    await phone.getByRole('button', { name: 'New key' }).click();
    const dialog = phone.getByRole('dialog');
    await dialog.getByLabel('Name').fill('Our tracker');
    await assertAccessible(phone, 'portal new key dialog');
    await assertFitsPhone(phone, 'portal new key dialog');
    await dialog.getByRole('button', { name: 'Create key' }).click();
    const secret = (await phone.getByTestId('portal-key-secret').innerText()).trim();
    assert.match(secret, /^lgpk_/);
    const me = await apiGet(server, '/api/portal/me', secret);
    assert.equal(me.status, 200, me.text);
    assert.deepEqual([me.json().traffic_provider.id, me.json().via], [provider.id, 'api_key']);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    const keyRow = phone.getByTestId('portal-key-row').filter({ hasText: 'Our tracker' });
    await keyRow.waitFor();
    await assertAccessible(phone, 'portal API keys (phone)');
    await assertFitsPhone(phone, 'portal API keys');
    await screenshot(phone, 'portal-api-keys-phone');
    await keyRow.getByRole('button', { name: 'Revoke' }).click();
    await phone.getByRole('dialog').getByRole('button', { name: 'Revoke key' }).click();
    await keyRow.getByTestId('portal-key-status').filter({ hasText: 'revoked' }).waitFor();
    assert.equal((await apiGet(server, '/api/portal/me', secret)).status, 401);

    // A dashboard address with a portal session goes to the portal.
    await phone.goto(`${base}/leads`);
    await phone.waitForURL(`${base}/portal`);

    // On a desktop: the usual sign-in page, into the portal (even when it was asked for a dashboard page).
    const { page: desktop } = await openBrowser(t);
    await desktop.goto(`${base}/settings/api`);
    await desktop.waitForURL('**/login?next=*');
    await desktop.getByLabel('Email').fill('affiliate@example.com');
    await desktop.getByLabel('Password').fill(PASSWORD);
    await desktop.getByRole('button', { name: 'Sign in' }).click();
    await desktop.waitForURL(`${base}/portal`);
    await desktop.getByTestId('portal-shows').waitFor();
    assert.equal(await desktop.getByTestId('portal-user').innerText(), 'affiliate@example.com');
    await assertAccessible(desktop, 'portal overview (desktop)');
    await screenshot(desktop, 'portal-overview-desktop');
    // An operator on a portal address goes to the dashboard.
    await operator.goto(`${base}/portal/api-keys`);
    await operator.waitForURL(`${base}/`);

    // The operator disables the user: the portal refuses it from its next request (back to sign in).
    await operator.goto(`${base}/traffic-providers/${provider.id}`);
    await row.getByTestId('portal-user-status').filter({ hasText: 'active' }).waitFor();
    // Its keys, in a drawer: the one it revoked itself.
    await row.getByRole('button', { name: 'Keys' }).click();
    const keys = operator.getByTestId('portal-user-key').filter({ hasText: 'Our tracker' });
    assert.match(await keys.innerText(), /revoked/i);
    assert.equal(await keys.getByRole('button', { name: 'Revoke' }).count(), 0);
    await assertAccessible(operator, 'portal user keys drawer');
    await operator.getByRole('button', { name: 'Close' }).click();
    // A second user's invitation, renewed: the old link stops working.
    await panel.getByLabel('Email').fill('second@example.com');
    await panel.getByRole('button', { name: 'Invite' }).click();
    const first = (await operator.getByTestId('invitation-link').innerText()).trim();
    await operator.getByRole('button', { name: 'Done' }).click();
    const second = panel.getByTestId('portal-user-row').filter({ hasText: 'second@example.com' });
    await second.getByRole('button', { name: 'Renew invitation' }).click();
    const renewed = (await operator.getByTestId('invitation-link').innerText()).trim();
    assert.notEqual(renewed, first);
    await operator.getByRole('button', { name: 'Done' }).click();
    const stale = await request(server.port, 'POST', '/api/portal/invitations/accept', {
      token: new URL(first).hash.replace('#token=', ''),
      password: PASSWORD,
    });
    assert.equal(stale.status, 400, stale.text);
    await row.getByRole('button', { name: 'Disable' }).click();
    await row.getByTestId('portal-user-status').filter({ hasText: 'disabled' }).waitFor();
    await desktop.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'API keys' }).click();
    await desktop.waitForURL('**/login?next=*');

    // Signing out of the portal ends the phone's session.
    await phone.getByRole('button', { name: 'Sign out' }).click();
    await phone.waitForURL(`${base}/login`);
  },
);

test(
  '"View as provider" opens the portal read only in a new tab, its token never in the address',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server, client } = await startServerAndClient(t);
    const base = `http://127.0.0.1:${server.port}`;
    const provider = await client.create('/api/traffic-providers', { name: 'Read Only Media' });
    const { context, page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-name').waitFor();
    await page.goto(`${base}/traffic-providers/${provider.id}`);
    const opened = context.waitForEvent('page');
    await page.getByRole('button', { name: 'View as provider' }).click();
    const portal = await opened;
    await portal.waitForURL(`${base}/portal`);
    await portal.getByTestId('view-as-banner').waitFor();
    assert.equal(portal.url(), `${base}/portal`, 'the token is gone from the address');
    assert.equal(await portal.getByTestId('portal-provider').innerText(), 'Read Only Media');
    await assertAccessible(portal, 'portal viewed as provider');
    await screenshot(portal, 'portal-view-as');
    // Read only: no control that changes anything.
    await portal.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'API keys' }).click();
    await portal.getByTestId('portal-keys-empty').waitFor();
    assert.equal(await portal.getByRole('button', { name: 'New key' }).count(), 0);
    await portal.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Campaigns' }).click();
    await portal.getByTestId('portal-campaigns-empty').waitFor();
    assert.equal(await portal.getByRole('button', { name: 'Rotate intake token' }).count(), 0);
    await portal.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Postbacks' }).click();
    assert.equal(await portal.getByRole('button', { name: 'Add postback' }).isDisabled(), true);
    assert.equal(await portal.getByRole('button', { name: 'Save postbacks' }).isDisabled(), true);
    await portal.getByRole('navigation', { name: 'Portal' }).getByRole('link', { name: 'Profile' }).click();
    await portal.getByRole('heading', { name: 'Profile' }).waitFor();
    assert.equal(await portal.getByRole('button', { name: 'Save' }).count(), 0);
    // The operator's own tab keeps its dashboard session.
    await page.goto(`${base}/settings/api`);
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    assert.equal(page.url(), `${base}/settings/api`);
    // A tab opened by hand borrows a session of its own side only: the dashboard's from the
    // operator's tab, the read-only portal one from the portal's.
    const dashboardTab = await context.newPage();
    await dashboardTab.goto(`${base}/leads`);
    await dashboardTab.getByTestId('operator-name').waitFor();
    assert.equal(dashboardTab.url(), `${base}/leads`);
    const portalTab = await context.newPage();
    await portalTab.goto(`${base}/portal/api-keys`);
    await portalTab.getByTestId('view-as-banner').waitFor();
    assert.equal(portalTab.url(), `${base}/portal/api-keys`);
    // And it is audited.
    const log = await client.send('GET', '/api/audit-log?action=traffic_provider.viewed_as');
    assert.equal(log.json().data.length, 1, log.text);
  },
);
