// The dashboard shell in a real browser: one session across reloads and the tabs of a browser
// (signing out in one signs out all), sign-in returning to the page asked for (never to another
// site), titles per screen, and a layout that works on a phone, a small laptop and a desktop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isDeepStrictEqual } from 'node:util';
import type { Page } from 'playwright-core';
import { defaultIntegration } from '../partner-server.js';
import {
  ADMIN,
  apiGet,
  assertAccessible,
  chromiumAvailable,
  openBrowser,
  screenshot,
  signIn,
  startServer,
  startServerAndClient,
  waitUntil,
} from './harness.js';

const SHARED = '/leads?country=DE&status=delivered';
const pathOf = (page: Page) => {
  const url = new URL(page.url());
  return `${url.pathname}${url.search}`;
};

test(
  'a session survives reloads and reaches new tabs; sign-out in one tab ends it in all',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const server = await startServer(t);
    const base = `http://127.0.0.1:${server.port}`;
    const { context, page } = await openBrowser(t);
    await signIn(page, server);
    await page.getByTestId('operator-name').waitFor();
    assert.equal(await page.title(), 'Overview · Leadgate');

    // A reload keeps the tab's session (sessionStorage outlives a reload) and the page with its query.
    await page.goto(`${base}${SHARED}`);
    await page.getByTestId('operator-name').waitFor();
    await page.reload();
    await page.getByTestId('operator-name').waitFor();
    assert.equal(pathOf(page), SHARED);
    assert.equal(await page.title(), 'Leads · Leadgate');

    // A new tab opened with a shared link borrows the open tab's session and shows that very page.
    const second = await context.newPage();
    await second.goto(`${base}${SHARED}`);
    await second.getByTestId('operator-name').waitFor();
    assert.equal(pathOf(second), SHARED);
    // …and keeps it in its own tab from then on: a reload needs no other tab to answer.
    await second.reload();
    await second.getByTestId('operator-name').waitFor();
    assert.equal(pathOf(second), SHARED);

    // A wrong password on the sign-in page of a tab holding the session is just a wrong password:
    // it does not end the session (nor, through it, every tab's).
    await second.goto(`${base}/login`);
    await second.getByLabel('Email').fill(ADMIN.email);
    await second.getByLabel('Password').fill('not-the-password');
    await second.getByRole('button', { name: 'Sign in' }).click();
    await second.getByTestId('form-error').waitFor();
    await second.goto(`${base}${SHARED}`);
    await second.getByTestId('operator-name').waitFor();

    // Signing out in the new tab ends the session on the server and in the first tab too.
    const token = await page.evaluate<string | null>("sessionStorage.getItem('leadgate.session')");
    await second.getByRole('button', { name: 'Sign out' }).click();
    await second.waitForURL('**/login');
    await page.getByTestId('login-notice').waitFor();
    assert.equal(pathOf(page), `/login?next=${encodeURIComponent(SHARED)}`, 'the first tab remembers where it was');
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('leadgate.session')"), null);
    assert.equal((await apiGet(server, '/api/auth/whoami', token!)).status, 401, 'the token is dead on the server');

    // With no tab signed in, a new tab asks for a sign-in (after a short wait for an answer).
    const third = await context.newPage();
    await third.goto(`${base}/leads`);
    await third.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(await third.title(), 'Sign in · Leadgate');
  },
);

test(
  'sign-in returns to the page and query asked for, and only to a path on this site',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const server = await startServer(t);
    const base = `http://127.0.0.1:${server.port}`;
    const { page } = await openBrowser(t);

    // A shared link in a browser with no session: sign in, then that page with its filters.
    await page.goto(`${base}${SHARED}`);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    assert.equal(pathOf(page), `/login?next=${encodeURIComponent(SHARED)}`);
    await page.getByLabel('Email').fill(ADMIN.email);
    await page.getByLabel('Password').fill(ADMIN.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await waitUntil('the shared page', async () => pathOf(page) === SHARED);
    await page.getByTestId('operator-name').waitFor();

    // A crafted return target to another site is refused: the operator lands on the Overview here.
    for (const next of [
      '//example.com/leads',
      '/\\example.com',
      'https://example.com/',
      '/\t/example.com',
      'javascript:alert(1)',
    ]) {
      await page.evaluate('sessionStorage.clear()');
      await page.goto(`${base}/login?next=${encodeURIComponent(next)}`);
      await page.getByLabel('Email').fill(ADMIN.email);
      await page.getByLabel('Password').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByTestId('operator-name').waitFor();
      assert.equal(page.url(), `${base}/`, next);
    }
  },
);

/** The header's Sign out button is on screen, and the header is one line (its own height). */
async function assertHeaderFits(page: Page, width: number) {
  const header = await page.locator('header').boundingBox();
  const signOut = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
  assert.ok(header && signOut);
  assert.equal(header.height, 56, 'the header does not wrap');
  assert.ok(signOut.x >= 0 && signOut.x + signOut.width <= width, 'Sign out is on screen');
  assert.ok(
    signOut.y >= header.y && signOut.y + signOut.height <= header.y + header.height,
    'Sign out is in the header',
  );
}

/** No sideways scrolling of the whole page: what is wide scrolls inside its own box. */
const pageFitsWidth = (page: Page) =>
  page.evaluate<boolean>('document.documentElement.scrollWidth <= window.innerWidth');

test('the layout works on a phone, a small laptop and a desktop', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server, client } = await startServerAndClient(t);
  await client.create('/api/partners', {
    name: 'A partner with quite a long name, Ltd',
    integration: defaultIntegration('http://127.0.0.1:9/leads'),
  });
  const { page } = await openBrowser(t);
  await page.setViewportSize({ width: 390, height: 844 });
  await signIn(page, server);
  await page.getByTestId('operator-name').waitFor();

  // Phone: the menu is behind the burger, the email is hidden, Sign out stays in the header.
  const nav = page.getByRole('navigation', { name: 'Main' });
  const burger = page.getByRole('button', { name: 'Open menu' });
  await burger.waitFor();
  assert.equal(await nav.isVisible(), false, 'the menu starts closed');
  assert.equal(await page.getByTestId('operator-email').isVisible(), false);
  await assertHeaderFits(page, 390);
  await screenshot(page, 'shell-phone');
  await assertAccessible(page, 'shell on a phone');

  await burger.click();
  await nav.getByRole('link', { name: 'Partners' }).waitFor();
  assert.equal(await page.getByRole('button', { name: 'Close menu' }).getAttribute('aria-expanded'), 'true');
  await screenshot(page, 'shell-phone-menu');
  await assertAccessible(page, 'the open menu on a phone');

  // Choosing a link closes the menu and shows the page.
  await nav.getByRole('link', { name: 'Partners' }).click();
  await page.waitForURL('**/partners');
  await waitUntil('the menu to close', async () => !(await nav.isVisible()));
  assert.equal(await page.title(), 'Partners · Leadgate');

  // On a phone the list keeps its key columns and fits: neither the page nor the table's box scrolls
  // sideways, and the secondary columns are hidden.
  await page.getByTestId('partners-table').waitFor();
  assert.ok(await pageFitsWidth(page), 'the page is no wider than the phone');
  // The box the table scrolls in: wider content than it shows?, and itself inside the window.
  const tableBox = () =>
    page.evaluate<{ scrollable: boolean; inside: boolean }>(`(() => {
    const box = document.querySelector('[data-testid="partners-table"]').closest('.mantine-ScrollArea-viewport');
    return { scrollable: box.scrollWidth > box.clientWidth, inside: box.getBoundingClientRect().right <= window.innerWidth };
  })()`);
  assert.deepEqual(await tableBox(), { scrollable: false, inside: true });
  assert.equal(await page.getByRole('columnheader', { name: 'Health' }).isVisible(), true);
  assert.equal(await page.getByRole('columnheader', { name: 'Today' }).isVisible(), true);
  assert.equal(await page.getByRole('columnheader', { name: 'Deal' }).isVisible(), false, 'a secondary column');
  await screenshot(page, 'shell-phone-list');
  await assertAccessible(page, 'a list on a phone');

  // Small laptop and desktop: the menu is always there, no burger, the whole header shows.
  for (const [width, height, name] of [
    [1024, 700, 'shell-laptop'],
    [1440, 900, 'shell-desktop'],
  ] as const) {
    await page.setViewportSize({ width, height });
    await nav.getByRole('link', { name: 'Partners' }).waitFor();
    assert.equal(await burger.isVisible(), false, `${name}: no burger`);
    await page.getByTestId('operator-email').waitFor();
    await assertHeaderFits(page, width);
    assert.ok(await pageFitsWidth(page), `${name}: the page is no wider than the window`);
    // Every column from `sm` up; on the small laptop the table scrolls in its own box.
    assert.equal(await page.getByRole('columnheader', { name: 'Deal' }).isVisible(), true, `${name}: every column`);
    // The table's box follows the window once the dashboard has seen the media query change (a render later).
    const expected = { scrollable: width === 1024, inside: true };
    await waitUntil(`${name}: the table's box to follow the window`, async () =>
      isDeepStrictEqual(await tableBox(), expected),
    ).catch(() => {});
    assert.deepEqual(await tableBox(), expected, `${name}: the table's box`);
    await screenshot(page, name);
    await assertAccessible(page, name);
  }
});
