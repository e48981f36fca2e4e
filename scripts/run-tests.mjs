// Runs every *.test.ts under src/ and test/ with node's test runner, so the same command works on
// Node 20, 22 and 24. Run it as `node --import tsx scripts/run-tests.mjs` (each test file's process
// inherits the --import); pass file paths to run only those.
//
// Files start in this order, TEST_CONCURRENCY (default 3) at a time: the slowest known files first,
// so the run does not end with one long file alone on a core, then the rest alphabetically. (The
// `node --test` command line sorts its files by path, so the order needs run().)
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';

// Measured on both engines on a 2-core machine (2026-12-03), slowest first, each above 35 s.
const SLOWEST = [
  'test/browser/a11y.test.ts',
  'test/browser/narrow-roles.test.ts',
  'src/server/modules/leads/export-load.test.ts',
  'test/injection-crash.test.ts',
  'src/server/modules/permissions/permissions.test.ts',
  'test/intake-crash.test.ts',
  'test/browser/phone-layout.test.ts',
  'test/fuzz.test.ts',
  'src/server/modules/analytics/demo-data.test.ts',
  'test/browser/conversion-loop.test.ts',
  'test/events-processes.test.ts',
  'test/browser/onboarding.test.ts',
  'test/browser/shell.test.ts',
  'src/server/distribution/recovery.test.ts',
  'test/browser/security-headers.test.ts',
];

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : find(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

let files = process.argv.slice(2);
if (!files.length) {
  const missing = SLOWEST.filter((f) => !existsSync(f));
  if (missing.length) {
    console.error(`scripts/run-tests.mjs: SLOWEST names files that are gone: ${missing.join(', ')}`);
    process.exit(1);
  }
  const rest = [...find('src'), ...find('test')].filter((f) => !SLOWEST.includes(f)).sort();
  files = [...SLOWEST, ...rest];
}
// 3 on 2 cores: the browser and process tests wait on their children, so a third file keeps the
// cores busy (the whole suite 24.8 min against 28.5 at 2 and in path order, 2026-12-03).
const concurrency = process.env.TEST_CONCURRENCY || '3';
if (!/^[1-9]\d*$/.test(concurrency)) {
  console.error(`TEST_CONCURRENCY must be a whole number above 0, not "${concurrency}"`);
  process.exit(1);
}
if (!process.execArgv.some((a) => a.includes('tsx'))) {
  console.error('scripts/run-tests.mjs needs tsx: node --import tsx scripts/run-tests.mjs');
  process.exit(1);
}
const engines = process.env.TEST_DATABASES || 'sqlite';
process.env.TEST_DATABASES = engines;
console.log(`Running ${files.length} test files on: ${engines}, ${concurrency} at a time`);
const stream = run({ files, concurrency: Number(concurrency) });
// Every event, a failing file's own included, passes through the stream (Node 20 emits no named event).
stream.on('data', (event) => {
  if (event.type === 'test:fail') process.exitCode = 1;
});
stream.compose(new spec()).pipe(process.stdout);
