// The production path: the compiled server (`npm run build` → dist/) started with plain
// `node dist/server/main.js`, no tsx, from a directory whose node_modules holds only the
// production dependencies (what `npm ci --omit=dev` installs). It must start, migrate, make
// the owner, answer health, log in, serve the dashboard and its files, and publish its schema.
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort, request } from './processes.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OWNER = { email: 'prod@example.test', password: 'production-pass-1' };

/** Every package `npm ci --omit=dev` would install, as its path under node_modules. */
function productionPackages(): string[] {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const prefix = path.join(ROOT, 'node_modules') + path.sep;
  return [
    ...new Set(
      out
        .split('\n')
        .filter((p) => p.startsWith(prefix))
        .map((p) => p.slice(prefix.length)),
    ),
  ].filter((p) => !p.includes(`${path.sep}node_modules${path.sep}`));
}

/** Health's 200 answer from the server on `port`; fails when `proc` exits first or after `ms`. */
async function untilHealthy(port: number, proc: ChildProcess, output: () => string, ms: number) {
  const deadline = Date.now() + ms;
  for (;;) {
    assert.equal(proc.exitCode, null, `the server exited:\n${output()}`);
    const up = await request(port, 'GET', '/api/health').catch(() => null);
    if (up?.status === 200) return up;
    assert.ok(Date.now() < deadline, `not up after ${ms / 1000} s:\n${output()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('built server from a production-only install: health, login, dashboard, OpenAPI', async (t) => {
  for (const built of ['dist/server/main.js', 'dist/web/index.html']) {
    assert.ok(
      existsSync(path.join(ROOT, built)),
      `${built} is missing: npm test builds it first (scripts/build-if-needed.mjs)`,
    );
  }
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const prod = productionPackages();
  // Build-time packages are dev dependencies: none of them is in a production install.
  for (const dev of ['vite', 'typescript', 'react', '@mantine/core', 'playwright-core', 'tsx']) {
    assert.ok(!prod.includes(dev), `${dev} would be installed in production`);
    assert.ok(!(dev in pkg.dependencies), `${dev} is a production dependency`);
  }
  for (const needed of ['fastify', 'better-sqlite3', 'pg', 'kysely'])
    assert.ok(prod.includes(needed), `${needed} missing`);

  // A directory like a production install: package.json, dist/, and node_modules with only
  // the production packages (linked from this checkout's install: no download, no rebuild).
  const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-prod-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  symlinkSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'));
  for (const name of prod) {
    const target = path.join(dir, 'node_modules', name);
    mkdirSync(path.dirname(target), { recursive: true });
    symlinkSync(path.join(ROOT, 'node_modules', name), target);
  }

  const port = await freePort();
  const child = spawn(process.execPath, ['--preserve-symlinks', '--preserve-symlinks-main', 'dist/server/main.js'], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: path.join(dir, 'data'),
      LEADGATE_ADMIN_EMAIL: OWNER.email,
      LEADGATE_ADMIN_PASSWORD: OWNER.password,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  });

  const up = await untilHealthy(port, child, () => output, 30_000);
  assert.equal(up.json().status, 'ok');

  const login = await request(port, 'POST', '/api/auth/login', OWNER);
  assert.equal(login.status, 200, login.text);
  const who = await request(port, 'GET', '/api/auth/whoami', undefined, {
    authorization: `Bearer ${login.json().token}`,
  });
  assert.equal(who.json().operator.email, OWNER.email);

  const page = await request(port, 'GET', '/leads');
  assert.equal(page.status, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  const script = /<script[^>]+src="([^"]+\.js)"/.exec(page.text)?.[1];
  assert.ok(script, 'the dashboard page names its script');
  const asset = await request(port, 'GET', script);
  assert.equal(asset.status, 200);
  assert.match(String(asset.headers['content-type']), /javascript/);

  const doc = await request(port, 'GET', '/api/openapi.json');
  assert.equal(doc.status, 200);
  assert.equal(doc.json().openapi, '3.1.0');
  assert.ok(Object.keys(doc.json().paths).length >= 40, `only ${Object.keys(doc.json().paths).length} paths`);
  assert.ok('/api/leads/search' in doc.json().paths);

  child.kill('SIGTERM');
  assert.equal(await exited, 0, `SIGTERM did not end it cleanly:\n${output}`);
});

/** The pid of the server process whose environment holds `mark` (npm and sh stand between). */
function serverWithMark(mark: string): { pid: number; env: Map<string, string> } | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    let environ: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
    } catch {
      continue; // gone, or not ours to read
    }
    // The server itself, not the shell npm runs it from (whose command line names it too).
    if (!cmdline.split('\0').includes('dist/server/main.js') || !environ.includes(`LEADGATE_START_MARK=${mark}`))
      continue;
    const env = new Map(environ.split('\0').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
    return { pid: Number(entry), env };
  }
  return null;
}

// `npm start` (the README's way) caps glibc's malloc arenas at 2: the server's threads (workers,
// V8's helpers, libuv's pool) otherwise each keep an arena of freed memory (bench/RESULTS.md,
// item 4 of issue 30). An operator's own MALLOC_ARENA_MAX is kept.
for (const given of [undefined, '4']) {
  const expected = given ?? '2';
  test(
    `npm start runs the server with MALLOC_ARENA_MAX=${expected}${given ? ' (the operator set it)' : ' (default)'}`,
    {
      skip: process.platform !== 'linux' && 'reads /proc',
    },
    async (t) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'leadgate-start-'));
      const mark = path.basename(dir);
      const port = await freePort();
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: path.join(dir, 'data'),
        LOG_LEVEL: 'warn',
        LEADGATE_START_MARK: mark,
      };
      if (given) env.MALLOC_ARENA_MAX = given;
      const npm = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      npm.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
      npm.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
      const exited = new Promise<number | null>((resolve) => npm.once('exit', (code) => resolve(code)));
      let server: ReturnType<typeof serverWithMark> = null;
      t.after(async () => {
        if (server) process.kill(server.pid, 'SIGTERM');
        if (npm.exitCode === null) await exited;
        rmSync(dir, { recursive: true, force: true });
      });
      await untilHealthy(port, npm, () => output, 60_000);
      server = serverWithMark(mark);
      assert.ok(server, 'the server process answering health is found by its environment');
      assert.equal(server.env.get('MALLOC_ARENA_MAX'), expected);
      process.kill(server.pid, 'SIGTERM');
      server = null;
      assert.equal(await exited, 0, `npm start did not end cleanly on SIGTERM:\n${output}`);
    },
  );
}
