// A Leadgate server process for the benchmarks: the built server (dist/, as production runs it;
// built first when src/ is newer) on a database URL, with the request rate limits off (a
// benchmark is one client sending far more than an operator would), and waited for until
// /api/health answers.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const OWNER = { email: 'bench@example.com', password: 'bench-password-123' };

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

export async function startServer(
  url: string,
  env: Record<string, string> = {},
): Promise<{ base: string; child: ChildProcess }> {
  execFileSync(process.execPath, ['scripts/build-if-needed.mjs'], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const port = await freePort();
  // BENCH_SERVER_NODE_ARGS, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof", profiles the server alone.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, 'dist/server/main.js'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: url,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn', // one log line per request would measure the log pipe
      LEADGATE_ADMIN_EMAIL: OWNER.email,
      LEADGATE_ADMIN_PASSWORD: OWNER.password,
      RATE_LIMIT_PER_KEY: '0',
      RATE_LIMIT_PER_IP: '0',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 120_000;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`the server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(2000) })).ok) return { base, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  child.kill('SIGTERM');
  throw new Error('the server did not answer /api/health within 120 s');
}

/** A new, empty PostgreSQL database `name` beside `adminUrl` (dropped first if it exists); its URL. */
export async function freshPostgresDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
