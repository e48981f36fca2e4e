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
      // As `npm start` runs it (package.json): glibc's malloc arenas capped at 2 unless set.
      MALLOC_ARENA_MAX: '2',
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

/** A JSON call of the server's API at `base`; an answer of 300 or more throws with its text. */
export type ApiCall = (method: string, path: string, body?: unknown, token?: string) => Promise<any>;

export const apiCaller =
  (base: string): ApiCall =>
  async (method, p, body, token) => {
    const res = await fetch(`${base}${p}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${p}: ${res.status} ${text}`);
    return JSON.parse(text);
  };

/**
 * Signed in as the owner: a partner on the loopback bench partner (bench/partner.ts at
 * `partnerPort`; `partner` adds fields) and a flow to it, and `campaign(name)` making a traffic
 * provider with a campaign on that flow (the provider's `token` is its intake token).
 */
export async function benchRoute(call: ApiCall, partnerPort: number, partner: Record<string, unknown> = {}) {
  const token: string = (await call('POST', '/api/auth/login', { email: OWNER.email, password: OWNER.password })).token;
  const integration = {
    method: 'POST',
    url: `http://127.0.0.1:${partnerPort}/leads`,
    headers: {},
    body_template: { email: '{{lead.email}}' },
    success_path: 'success',
    lead_id_path: 'data.id',
    autologin_path: 'data.autologin_url',
    timeout_ms: 5000,
  };
  const p = await call('POST', '/api/partners', { name: 'Bench buyer', integration, ...partner }, token);
  const flow = await call('POST', '/api/flows', { name: 'Bench', targets: [{ partner_id: p.id, priority: 1 }] }, token);
  const campaign = async (name: string) => {
    const provider = await call('POST', '/api/traffic-providers', { name }, token);
    const c = await call(
      'POST',
      '/api/campaigns',
      { name, traffic_provider_id: provider.id, flow_id: flow.id, payout: { model: 'cpl', amount: 10 } },
      token,
    );
    return { provider, campaign: c };
  };
  return { token, campaign };
}
