// `npm start` runs this first: compiles the server when dist/ is missing or older than src/.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const output = 'dist/server/main.js';

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

const inputs = Math.max(newestMtime('src/server'), statSync('package.json').mtimeMs, statSync('tsconfig.build.json').mtimeMs);
if (!existsSync(output) || statSync(output).mtimeMs < inputs) {
  console.log('Building the server…');
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}
