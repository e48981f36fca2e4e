// A small stand-in for the dashboard's Vite build, for tests of how the server serves it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

export const FAKE_INDEX =
  '<!doctype html><html><body><div id="root"></div><script type="module" src="/assets/index-AbC123.js"></script></body></html>';

/** index.html, one hashed asset and one root file in a temporary folder, removed after the test. */
export function fakeBuild(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'leadgate-web-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), FAKE_INDEX);
  writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log("app");');
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}
