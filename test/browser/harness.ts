// Browser tests: Debian's Chromium driven by playwright-core (which downloads no browsers),
// against a real server process serving the built dashboard. Without Chromium the tests are
// skipped locally and fail under CI=true, where .ci/run installs it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ADMIN, request, ServerClient, spawnServer, waitUntilUp, type Child } from '../processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const SCREENSHOTS = path.join(ROOT, 'test-output', 'screenshots');
export { ADMIN };

/** False (and the test skipped) when there is no Chromium here; throws under CI=true. */
export function chromiumAvailable(t: TestContext): boolean {
  if (existsSync(CHROMIUM)) return true;
  const why = `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`;
  if (process.env.CI === 'true') throw new Error(`browser tests cannot run: ${why}`);
  t.skip(`skipped: ${why}`);
  return false;
}

let built = false;
/** Builds dist/web when it is missing or older than src/web; once per test process. */
export function ensureDashboardBuilt() {
  if (built) return;
  execFileSync(process.execPath, ['scripts/build-if-needed.mjs', 'web'], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  built = true;
}

/** A fresh server process (SQLite, owner ADMIN) serving the built dashboard. */
export async function startServer(t: TestContext, env: Record<string, string> = {}): Promise<Child> {
  ensureDashboardBuilt();
  const child = await spawnServer(t, {
    LEADGATE_ADMIN_EMAIL: ADMIN.email,
    LEADGATE_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'warn',
    DELIVERY_RECOVERY_INTERVAL_MS: '0',
    ...env,
  });
  await waitUntilUp(child);
  return child;
}

/** startServer, and an API client signed in there as the owner (closed when the test ends). */
export async function startServerAndClient(
  t: TestContext,
  env: Record<string, string> = {},
): Promise<{ server: Child; client: ServerClient }> {
  const server = await startServer(t, env);
  const client = await new ServerClient(server.port).login();
  t.after(() => client.close());
  return { server, client };
}

/** A headless Chromium with a throwaway profile; closed when the test ends. `timezoneId`: the browser's zone. */
export async function openBrowser(
  t: TestContext,
  opts: { timezoneId?: string } = {},
): Promise<{ context: BrowserContext; page: Page }> {
  const profile = mkdtempSync(path.join(tmpdir(), 'leadgate-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    // The dashboard then skips its transitions: screenshots show settled screens.
    reducedMotion: 'reduce',
    timezoneId: opts.timezoneId,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  context.setDefaultTimeout(10_000);
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
  });
  const page = context.pages()[0] ?? (await context.newPage());
  // A script error in the dashboard fails the test that caused it, with the message.
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  t.after(() => {
    if (errors.length) throw new Error(`the page threw:\n${errors.join('\n')}`);
  });
  return { context, page };
}

export async function screenshot(page: Page, name: string) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** The three sizes issue 13 asks screens to be tried at: a phone, a small laptop, a desktop. */
export const SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'laptop', width: 1024, height: 700 },
  { name: 'desktop', width: 1440, height: 900 },
];

/** Screenshots of the page at each of SIZES (`name-phone.png` …), then back to the desktop size. */
export async function screenshotsAtEverySize(page: Page, name: string) {
  for (const s of SIZES) {
    await page.setViewportSize({ width: s.width, height: s.height });
    await screenshot(page, `${name}-${s.name}`);
  }
  await page.setViewportSize({ width: 1440, height: 900 });
}

/** GET with a Bearer token straight at the server, outside the browser. */
export const apiGet = (child: Child, urlPath: string, token: string) =>
  request(child.port, 'GET', urlPath, undefined, { authorization: `Bearer ${token}` });

/** Opens the login page of `child` and signs in as the owner; `before` runs with the form filled. */
export async function signIn(page: Page, child: Child, before?: () => Promise<void>) {
  await page.goto(`http://127.0.0.1:${child.port}/login`);
  await page.getByLabel('Email').fill(ADMIN.email);
  await page.getByLabel('Password').fill(ADMIN.password);
  await before?.();
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs in as `operator`; the header's name shows at every width (the email is left out on a phone). */
export async function signInAs(page: Page, child: Child, operator: { name: string; email: string; password: string }) {
  await page.goto(`http://127.0.0.1:${child.port}/login`);
  await page.getByLabel('Email').fill(operator.email);
  await page.getByLabel('Password').fill(operator.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('operator-name').filter({ hasText: operator.name }).waitFor();
}

/** A role, and an operator holding it, signed in in the page (the page's earlier session forgotten). */
export async function signInWithRole(
  page: Page,
  child: Child,
  api: ServerClient,
  role: { name: string; permissions: string[]; scope?: object },
) {
  const made = await api.create('/api/roles', role);
  const operator = {
    name: `${role.name} operator`,
    email: `${role.name.toLowerCase().replace(/\W+/g, '.')}@example.com`,
    password: 'narrow-password-123',
  };
  await api.create('/api/operators', { ...operator, role_id: made.id, current_password: ADMIN.password });
  await page.evaluate('sessionStorage.clear()');
  await signInAs(page, child, operator);
}

/**
 * Polls `check` from the test's side until it answers true. Not page.waitForFunction: it polls
 * inside the page through eval, which the dashboard's Content-Security-Policy forbids (the first
 * check runs over the DevTools protocol and passes, later ones fail: a race, not a rule).
 */
export async function waitUntil(what: string, check: () => Promise<boolean>, ms = 15_000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * Runs axe-core in the page (injected over the DevTools protocol, which the CSP does not govern)
 * and throws, naming each rule and element, when the screen has a moderate, serious or critical
 * violation (dialogs and drawers included: their title bar is no second banner landmark).
 */
export async function assertAccessible(page: Page, screen: string) {
  // A lazily loaded screen may still be on its way (the layout, its notices included, draws
  // first); give it a moment to bring its heading. Without one after that, axe names the fault.
  await page
    .locator('h1')
    .first()
    .waitFor({ state: 'attached', timeout: 5_000 })
    .catch(() => undefined);
  const impacts = ['moderate', 'serious', 'critical'];
  const violations = (await page.evaluate(`(async () => {
    if (!window.axe) { ${AXE_SOURCE}\n }
    const result = await window.axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => ${JSON.stringify(impacts)}.includes(v.impact))
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
  })()`)) as { id: string; impact: string; help: string; targets: string[] }[];
  if (violations.length) {
    const lines = violations.map((v) => `- ${v.impact} ${v.id}: ${v.help} (${v.targets.join(', ')})`);
    throw new Error(`${screen}: accessibility violations\n${lines.join('\n')}`);
  }
}

/**
 * The outermost visible elements whose box reaches past the viewport's right edge (their
 * children are not listed again), as "selector "text": right edge, width" lines, and the page's
 * scroll width. Elements a closed ancestor clips away (overflow hidden, a visually hidden
 * input) do not count: nobody sees them; content a scroll box holds does.
 */
const MEASURE = `(() => {
  const limit = document.documentElement.clientWidth;
  const shown = (el) => {
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none' || Number(style.opacity) === 0) return false;
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0;
  };
  const clippedAway = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const style = getComputedStyle(a);
      if (style.overflowX === 'hidden' || style.overflowX === 'clip' || style.clipPath !== 'none' || style.clip !== 'auto') {
        return a.getBoundingClientRect().right <= limit + 0.5;
      }
    }
    return false;
  };
  const describe = (el) => {
    const id = el.getAttribute('data-testid');
    const cls = typeof el.className === 'string' ? el.className.split(' ').filter(Boolean).slice(0, 2) : [];
    const name = el.tagName.toLowerCase() + (id ? '[data-testid=' + id + ']' : '') + cls.map((c) => '.' + c).join('');
    const text = (el.innerText || el.getAttribute('aria-label') || '').replace(/\\s+/g, ' ').trim().slice(0, 60);
    const r = el.getBoundingClientRect();
    return name + ' "' + text + '": right ' + Math.round(r.right) + ' px, ' + Math.round(r.width) + ' px wide';
  };
  const offenders = new Set();
  const lines = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.getBoundingClientRect().right <= limit + 0.5 || !shown(el) || clippedAway(el)) continue;
    offenders.add(el);
    let parent = el.parentElement;
    while (parent && !offenders.has(parent)) parent = parent.parentElement;
    if (!parent) lines.push(describe(el));
  }
  return { scrollWidth: document.documentElement.scrollWidth, lines };
})()`;

/** The page's scroll width and the MEASURE lines: what reaches past the viewport's right edge. */
export const wideElements = async (page: Page) =>
  (await page.evaluate(MEASURE)) as { scrollWidth: number; lines: string[] };
