// The built dashboard is split per screen: the JavaScript a browser loads first (the entry script
// and what index.html preloads) holds the shell (React, Mantine, router, API client, nav), not the
// screens, and stays within a size budget. Each screen's code arrives when it is opened.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ensureDashboardBuilt } from './harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WEB = path.join(ROOT, 'dist', 'web');
// Gzipped bytes of the initial JavaScript. The shell was 111 KB when this was written.
const INITIAL_JS_BUDGET = 160 * 1024;

// Text found only in one screen each: none of it may be in the initial JavaScript.
const SCREEN_TEXT = ['Send test lead', 'Rotate postback token', "Every operator's keys", 'Add target', 'Load more'];

test('the initial JavaScript is the shell only, within budget; every screen is its own chunk', () => {
  ensureDashboardBuilt();
  const html = readFileSync(path.join(WEB, 'index.html'), 'utf8');
  const initial = [
    ...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="\/(assets\/[^"]+\.js)"/g),
  ].map((m) => m[1]);
  assert.ok(initial.length >= 1, `index.html names its entry script:\n${html}`);
  const initialCode = initial.map((f) => readFileSync(path.join(WEB, f), 'utf8')).join('\n');

  const gzipped = gzipSync(initialCode).length;
  assert.ok(
    gzipped <= INITIAL_JS_BUDGET,
    `initial JS is ${Math.round(gzipped / 1024)} KB gzipped, over the ${INITIAL_JS_BUDGET / 1024} KB budget`,
  );
  for (const text of SCREEN_TEXT)
    assert.ok(!initialCode.includes(text), `"${text}" (screen code) is in the initial JavaScript`);

  // Every lazy screen of App.tsx became a chunk of its own, loaded on demand.
  const app = readFileSync(path.join(ROOT, 'src', 'web', 'App.tsx'), 'utf8');
  const lazyScreens = [...app.matchAll(/lazy\(\(\) => import\('\.\/(screens\/[^']+)'\)\)/g)].map((m) =>
    path.basename(m[1]),
  );
  assert.ok(lazyScreens.length >= 10, `App.tsx imports its screens lazily (found ${lazyScreens.length})`);
  const chunks = readdirSync(path.join(WEB, 'assets')).filter((f) => f.endsWith('.js'));
  for (const screen of lazyScreens) {
    assert.ok(
      chunks.some((f) => f.startsWith(`${screen}-`)),
      `no chunk of its own for ${screen}: ${chunks.join(', ')}`,
    );
  }
});
