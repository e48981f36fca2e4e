// The Content-Security-Policy in a real browser (issue 11 finding 8): the dashboard and Swagger UI
// work under it with no violation reported, and it is really enforced (framing is refused).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { chromiumAvailable, openBrowser, screenshot, signIn, startServerAndClient } from './harness.js';

/** Chromium reports each CSP violation on the console; the event listener catches any it would not. */
async function watchCsp(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) violations.push(m.text());
  });
  // A string: it runs in the page (DOM types are not in the tests' TypeScript lib).
  await page.addInitScript(`document.addEventListener('securitypolicyviolation', (e) =>
    console.error('Content Security Policy violation: ' + e.violatedDirective + ' blocked ' + e.blockedURI + ' (' + e.sourceFile + ':' + e.lineNumber + ')'))`);
  return violations;
}

test('the dashboard runs under the Content-Security-Policy with no violation', { timeout: 120_000 }, async (t) => {
  if (!chromiumAvailable(t)) return;
  const { server } = await startServerAndClient(t);
  const { page } = await openBrowser(t);
  const violations = await watchCsp(page);
  const base = `http://127.0.0.1:${server.port}`;

  const first = await page.goto(`${base}/login`);
  assert.match(first!.headers()['content-security-policy'], /script-src 'self'/);
  await signIn(page, server);
  await page.getByTestId('operator-name').waitFor();
  // Screens with charts (recharts SVG), tables, forms and modals, and the two-factor QR code (a data: image).
  for (const [path, ready] of [
    ['/analytics', 'Analytics'],
    ['/leads', 'Leads'],
    ['/flows', 'Flows'],
    ['/settings/hosting', 'Hosting'],
  ] as const) {
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { name: ready, exact: true }).first().waitFor();
  }
  await page.goto(`${base}/profile`);
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  const qr = page.getByTestId('totp-qr');
  await qr.waitFor();
  const loaded = await qr.evaluate(
    (img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth > 0,
  );
  assert.equal(loaded, true, 'the QR code image loaded');
  // Mantine's run-time <style> elements applied: a button is styled, not a bare browser button.
  const radius = await page
    .getByRole('button', { name: 'Turn on' })
    .evaluate(
      (b) =>
        (globalThis as unknown as { getComputedStyle(e: unknown): { borderRadius: string } }).getComputedStyle(b)
          .borderRadius,
    );
  assert.notEqual(radius, '0px', 'Mantine styles are applied');
  await screenshot(page, 'csp-dashboard');
  assert.equal(violations.length, 0, violations.join('\n'));

  // Enforced, not only sent: no page may frame the dashboard (frame-ancestors 'none'), not even
  // one of this origin (a page elsewhere would meet Chromium's local-network checks first).
  await page.goto(`${base}/api/health`);
  await page.setContent(`<iframe src="${base}/login"></iframe>`);
  const deadline = Date.now() + 10_000;
  while (!violations.some((v) => v.includes('frame-ancestors')) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 100));
  assert.ok(
    violations.some((v) => v.includes('frame-ancestors')),
    `framing refused: ${violations.join('\n')}`,
  );
  assert.equal(
    page.frames()[1]?.url(),
    'chrome-error://chromewebdata/',
    'the frame shows an error page, not the dashboard',
  );
});

test(
  'Swagger UI at /api/docs renders the operations under the Content-Security-Policy',
  { timeout: 120_000 },
  async (t) => {
    if (!chromiumAvailable(t)) return;
    const { server } = await startServerAndClient(t);
    const { page } = await openBrowser(t);
    const violations = await watchCsp(page);

    const res = await page.goto(`http://127.0.0.1:${server.port}/api/docs`);
    assert.match(res!.headers()['content-security-policy'], /frame-ancestors 'none'/);
    // Every tag of the document is listed, closed (this Swagger UI stops rendering past about 130
    // open operations); a tag opens on demand and shows its operations by id (displayOperationId).
    // Swagger UI resolves the whole document (about 1 MB) before it draws the first tag: about 5 s
    // on the 2-core CI machine alone, over 10 s beside the rest of the suite.
    page.setDefaultTimeout(45_000);
    await page.locator('.opblock-tag').first().waitFor();
    const doc = (await (await fetch(`http://127.0.0.1:${server.port}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { tags?: string[] }>>;
    };
    const tags = new Set(
      Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])),
    );
    assert.equal(await page.locator('.opblock-tag').count(), tags.size, 'every tag is listed');
    await page
      .locator('.opblock-tag')
      .filter({ hasText: /^Hosting/ })
      .first()
      .click();
    await page.getByText('listBackups', { exact: true }).first().waitFor();
    await page.locator('.opblock-tag').filter({ hasText: /^Meta/ }).first().click();
    await page.getByText('getHealth', { exact: true }).first().waitFor();
    await page
      .locator('.opblock-tag')
      .filter({ hasText: /^Portal/ })
      .first()
      .click();
    await page.getByText('searchPortalLeads', { exact: true }).first().waitFor();
    // Expanding one runs Swagger UI's own scripts and styles further (schemas, responses).
    await page.locator('.opblock-summary').filter({ hasText: 'getHealth' }).first().click();
    await page.locator('.opblock-body').first().waitFor();
    await screenshot(page, 'csp-api-docs');
    assert.equal(violations.length, 0, violations.join('\n'));
  },
);
