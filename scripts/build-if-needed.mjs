// `npm start` runs this first: compiles the server and builds the dashboard when their output
// is missing or older than their sources. `node scripts/build-if-needed.mjs web` (or `server`)
// does only that part; the browser tests use `web`.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function newestMtime(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = 0;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

const stale = (output, inputs) =>
  !existsSync(output) || statSync(output).mtimeMs < Math.max(...inputs.map(newestMtime));

const parts = {
  server: {
    output: 'dist/server/main.js',
    inputs: ['src/server', 'package.json', 'tsconfig.json', 'tsconfig.build.json'],
    say: 'Building the server…',
    command: ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'],
  },
  // Vite rewrites dist/web/index.html on every build, so its age is the build's age.
  web: {
    output: 'dist/web/index.html',
    inputs: ['src/web', 'vite.config.ts', 'package.json', 'package-lock.json'],
    say: 'Building the dashboard…',
    command: ['node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'],
  },
};

const wanted = process.argv.slice(2);
for (const name of wanted.length ? wanted : Object.keys(parts)) {
  const part = parts[name];
  if (!part) {
    console.error(`Unknown part "${name}": use ${Object.keys(parts).join(' or ')}.`);
    process.exit(2);
  }
  if (!stale(part.output, part.inputs)) continue;
  // An install without dev dependencies cannot build; serve what there is (the server says
  // at / how to build the dashboard) rather than refuse to start.
  if (!existsSync(part.command[0])) {
    console.warn(`${part.output} is missing or out of date, and ${part.command[0]} is not installed to rebuild it.`);
    continue;
  }
  console.log(part.say);
  try {
    execFileSync(process.execPath, part.command, { stdio: 'inherit' });
  } catch {
    process.exit(1); // the compiler has said why
  }
}
