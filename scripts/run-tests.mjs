// Runs every *.test.ts under src/ and test/ with node's test runner (through tsx), so the same
// command works on Node 20, 22 and 24. Pass file paths to run only those.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : find(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

const files = process.argv.slice(2).length ? process.argv.slice(2) : [...find('src'), ...find('test')].sort();
const engines = process.env.TEST_DATABASES || 'sqlite';
console.log(`Running ${files.length} test files on: ${engines}`);
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
  { stdio: 'inherit', env: { ...process.env, TEST_DATABASES: engines } },
);
process.exit(result.status ?? 1);
